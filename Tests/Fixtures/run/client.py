"""A test program for `sluice run`: GETs each URL given with requests (which reads the proxy and
CA variables `sluice run` sets), prints one line per answer, and exits with the status given by
--exit (default 0). With --wait it sleeps until a signal ends it (SIGINT: exit 130)."""
import argparse
import sys
import time

import requests

parser = argparse.ArgumentParser()
parser.add_argument("urls", nargs="*")
parser.add_argument("--exit", type=int, default=0)
parser.add_argument("--wait", action="store_true")
arguments = parser.parse_args()
for url in arguments.urls:
    answer = requests.get(url, timeout=10)
    print(answer.status_code, url, flush=True)
if arguments.wait:
    try:
        # Inside the try: the signal may come as soon as "waiting" is out.
        print("waiting", flush=True)
        time.sleep(60)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
        sys.exit(130)
sys.exit(arguments.exit)
