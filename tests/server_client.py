#!/usr/bin/env python3
"""A client of examples/sdx-server for tests/t_server.c, on Python's
standard library alone (urllib), as front-ends and scripts talk to
AUTOMATIC1111's API. Each command prints what it saw, one fact a line;
the C suite checks the lines.

  server_client.py generate URL ENDPOINT BODY OUT [init=PNG] [mask=PNG]
      POST BODY (JSON) to URL/sdapi/v1/ENDPOINT, with the PNG files as
      base64 init_images[0] / mask; prints the status, each image's PNG
      size (written to OUT-N.png, its infotext to OUT-N.txt), the seeds
      and the echoed sampler and scheduler, or the error's detail
  server_client.py progress URL BODY
      polls /progress while a txt2img of BODY runs: the first report
      with a step and a preview, then the reply, then the idle report
  server_client.py interrupt URL BODY
      interrupts a txt2img of BODY after its second step; its reply
  server_client.py concurrent URL N BODY
      N txt2img at once, seeds 0..N-1: how many were answered, how many
      200 with their own seed
"""
import base64
import json
import struct
import sys
import threading
import time
import urllib.error
import urllib.request

TIMEOUT = 120


def call(url, body=None):
    """(status, parsed JSON reply) of a GET, or of a POST of body."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=TIMEOUT) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as e:
        return e.code, json.load(e)


def png_size(data):
    """(width, height) from a PNG's IHDR; None if it is no PNG."""
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        return None
    return struct.unpack(">II", data[16:24])


def b64_file(path):
    with open(path, "rb") as f:
        return base64.b64encode(f.read()).decode()


def generate(url, endpoint, body, out, files):
    for spec in files:
        key, path = spec.split("=", 1)
        if key == "init":
            body["init_images"] = ["data:image/png;base64," + b64_file(path)]
        else:
            body["mask"] = b64_file(path)
    status, reply = call(url + "/sdapi/v1/" + endpoint, body)
    print("status", status)
    if status != 200:
        print("error", reply.get("error"))
        print("detail", reply.get("detail"))
        return
    info = json.loads(reply["info"])
    for i, image in enumerate(reply["images"]):
        data = base64.b64decode(image)
        size = png_size(data)
        print("image %d %s" % (i + 1, "%dx%d" % size if size else "not a PNG"))
        with open("%s-%d.png" % (out, i + 1), "wb") as f:
            f.write(data)
        with open("%s-%d.txt" % (out, i + 1), "w", encoding="utf-8") as f:
            f.write(info["infotexts"][i])
    print("seeds", ",".join(str(s) for s in info["all_seeds"]))
    echo = reply["parameters"]
    print("echo sampler_name=%s scheduler=%s init_images=%s" % (echo.get("sampler_name"), echo.get("scheduler"),
                                                                 echo.get("init_images", "absent")))


def in_background(url, body):
    """Starts a txt2img of body; the returned dict gets its reply."""
    result = {}

    def run():
        result["reply"] = call(url + "/sdapi/v1/txt2img", body)

    t = threading.Thread(target=run)
    t.start()
    return t, result


def progress(url, body):
    t, result = in_background(url, body)
    seen = None
    while t.is_alive() and not seen:
        _, p = call(url + "/sdapi/v1/progress")
        if p["state"]["sampling_step"] > 0 and p["current_image"]:
            seen = p
        time.sleep(0.005)
    t.join()
    if seen:
        st = seen["state"]
        size = png_size(base64.b64decode(seen["current_image"]))
        print("running step %d of %d, progress %.3f, eta %.3f, job_count %d, interrupted %s, preview %s" % (
            st["sampling_step"], st["sampling_steps"], seen["progress"], seen["eta_relative"], st["job_count"],
            st["interrupted"], "%dx%d" % size if size else "not a PNG"))
    print("status", result["reply"][0])
    _, p = call(url + "/sdapi/v1/progress")
    print("idle progress %g, job_count %d, current_image %s" % (p["progress"], p["state"]["job_count"], p["current_image"]))


def interrupt(url, body):
    t, result = in_background(url, body)
    while t.is_alive():
        _, p = call(url + "/sdapi/v1/progress")
        if p["state"]["sampling_step"] >= 2:
            status, reply = call(url + "/sdapi/v1/interrupt", {})
            print("interrupt", status, json.dumps(reply))
            break
        time.sleep(0.002)
    t.join()
    status, reply = result["reply"]
    print("status", status)
    print("detail", reply.get("detail"))


def concurrent(url, n, body):
    replies = [None] * n

    def run(i):
        replies[i] = call(url + "/sdapi/v1/txt2img", dict(body, seed=i))

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    answered = sum(1 for r in replies if r)
    own = 0
    for i, r in enumerate(replies):
        if r and r[0] == 200:
            info = json.loads(r[1]["info"])
            own += info["all_seeds"] == [i] and ("Seed: %d," % i) in info["infotexts"][0]
    print("answered %d of %d, %d with their own seed" % (answered, n, own))


def main(argv):
    cmd, url = argv[1], argv[2]
    if cmd == "generate":
        generate(url, argv[3], json.loads(argv[4]), argv[5], argv[6:])
    elif cmd == "progress":
        progress(url, json.loads(argv[3]))
    elif cmd == "interrupt":
        interrupt(url, json.loads(argv[3]))
    elif cmd == "concurrent":
        concurrent(url, int(argv[3]), json.loads(argv[4]))
    else:
        sys.exit("server_client.py: unknown command " + cmd)


if __name__ == "__main__":
    main(sys.argv)
