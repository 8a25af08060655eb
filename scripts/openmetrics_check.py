"""Scrape a blobrace run's metrics endpoint and parse it with the Prometheus Python
client's OpenMetrics parser (strict: a malformed exposition is an error). Prints one
line per sample, `name{labels} value`, after a first line `content-type: ...`.

usage: openmetrics_check.py URL
"""
import sys
import urllib.request

from prometheus_client.openmetrics.parser import text_string_to_metric_families


def main() -> int:
    url = sys.argv[1]
    with urllib.request.urlopen(url, timeout=10) as response:
        content_type = response.headers.get("Content-Type", "")
        body = response.read().decode("utf-8")
    print(f"content-type: {content_type}")
    for family in text_string_to_metric_families(body):
        for sample in family.samples:
            labels = ",".join(f'{k}="{v}"' for k, v in sorted(sample.labels.items()))
            print(f"{sample.name}{{{labels}}} {sample.value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
