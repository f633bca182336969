"""Scraping the checkout's metrics in tests: the token, one scrape, its samples by name and labels."""
from __future__ import annotations

from collections.abc import Mapping

from prometheus_client.parser import text_string_to_metric_families

TOKEN = "metrics-token-for-tests-0123456789abcdef"
PATH = "/checkout/metrics"


def bearer(token: str = TOKEN) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


class Scrape:
    """The samples of one scrape (the Prometheus text format, parsed by prometheus_client)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.samples = [sample for family in text_string_to_metric_families(text)
                        for sample in family.samples]

    def value(self, name: str, **labels: str) -> float:
        """The sum of the samples named ``name`` whose labels include ``labels`` (0: none)."""
        return sum(s.value for s in self.samples
                   if s.name == name and _includes(s.labels, labels))

    def label_values(self, label: str) -> set[str]:
        return {s.labels[label] for s in self.samples if label in s.labels}

    def all_label_values(self) -> set[str]:
        return {value for s in self.samples for value in s.labels.values()}


def _includes(labels: Mapping[str, str], wanted: Mapping[str, str]) -> bool:
    return all(labels.get(key) == value for key, value in wanted.items())


def scrape(client) -> Scrape:
    response = client.get(PATH, headers=bearer())
    assert response.status_code == 200, response.status_code
    return Scrape(response.get_data(as_text=True))
