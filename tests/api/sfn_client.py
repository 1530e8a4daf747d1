"""A small client of swf-api: the AWS JSON 1.0 protocol signed with
Signature Version 4, on the standard library only (boto3 takes a third of
a second to import, which each of 450 conformance cases would pay, and
its per-call overhead would weigh on a benchmark's figures).

The endpoint and credentials are the exports of `swf dev`: SWF_API_URL,
AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_DEFAULT_REGION. One
keep-alive connection per thread.
"""
import datetime
import hashlib
import hmac
import http.client
import json
import os
import threading
import urllib.parse


class Api:
    """A SigV4-signing client of swf-api, one keep-alive connection per thread."""

    def __init__(self):
        url = urllib.parse.urlparse(os.environ["SWF_API_URL"])
        self.host, self.port = url.hostname, url.port or 80
        self.netloc = url.netloc
        self.key = os.environ["AWS_ACCESS_KEY_ID"]
        self.secret = os.environ["AWS_SECRET_ACCESS_KEY"]
        self.region = os.environ.get("AWS_DEFAULT_REGION", "us-east-1")
        self.local = threading.local()

    def _headers(self, target, body):
        now = datetime.datetime.now(datetime.timezone.utc)
        amz, day = now.strftime("%Y%m%dT%H%M%SZ"), now.strftime("%Y%m%d")
        h = {
            "content-type": "application/x-amz-json-1.0",
            "host": self.netloc,
            "x-amz-date": amz,
            "x-amz-target": "AWSStepFunctions." + target,
        }
        names = ";".join(sorted(h))
        canonical = "\n".join(
            ["POST", "/", "", "".join("%s:%s\n" % (k, h[k]) for k in sorted(h)), names,
             hashlib.sha256(body).hexdigest()])
        scope = "%s/%s/states/aws4_request" % (day, self.region)
        to_sign = "\n".join(
            ["AWS4-HMAC-SHA256", amz, scope, hashlib.sha256(canonical.encode()).hexdigest()])
        k = ("AWS4" + self.secret).encode()
        for part in (day, self.region, "states", "aws4_request"):
            k = hmac.new(k, part.encode(), hashlib.sha256).digest()
        sig = hmac.new(k, to_sign.encode(), hashlib.sha256).hexdigest()
        h["authorization"] = "AWS4-HMAC-SHA256 Credential=%s/%s, SignedHeaders=%s, Signature=%s" % (
            self.key, scope, names, sig)
        return h

    def call(self, action, payload, timeout=70):
        """The answer as a dict, or {"__type": NAME, "message": ...} for an error."""
        body = json.dumps(payload).encode()
        for attempt in (1, 2):
            conn = getattr(self.local, "conn", None)
            if conn is None:
                conn = self.local.conn = http.client.HTTPConnection(self.host, self.port,
                                                                    timeout=timeout)
            try:
                conn.request("POST", "/", body, self._headers(action, body))
                resp = conn.getresponse()
                data = resp.read()
            except (http.client.HTTPException, OSError):
                # The server closes a connection idle for 30 s: once more on
                # a new one (every call made here may be repeated).
                conn.close()
                self.local.conn = None
                if attempt == 2:
                    raise
                continue
            out = json.loads(data) if data else {}
            if resp.status != 200 and "__type" not in out:
                out["__type"] = "HTTP %d" % resp.status
            return out
