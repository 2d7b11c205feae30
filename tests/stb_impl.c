/* stb_image and stb_image_write compiled in, for builds without Debian's
 * libstb (the mingw-w64 and aarch64 cross builds of `make cross`): the
 * headers come from libstb-dev (/usr/include/stb), through -isystem. */
#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb/stb_image.h>
#include <stb/stb_image_write.h>
