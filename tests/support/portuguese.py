"""The Portuguese the checkout writes is that of Portugal, Mozambique and Angola: the forms only
Brazil's Portuguese writes (CLDR's plain "pt" is Brazil's), to be found nowhere on a page."""
from __future__ import annotations

import re

# Each Brazilian form, beside what Portugal, Mozambique and Angola write instead.
BRAZILIAN_ONLY = {
    "Quênia": "Quénia", "Horário": "Hora", "celular": "telemóvel", "Digite": "Introduza",
    "arquivo": "ficheiro", "usuário": "utilizador", "tela": "ecrã", "registro": "registo",
    "contato": "contacto", "câmera": "câmara", "equipe": "equipa", "você": "o senhor/a senhora",
    "ônibus": "autocarro", "fato": "facto", "recepção": "receção", "salvar": "guardar",
}
_WORDS = re.compile(r"\b(?:" + "|".join(BRAZILIAN_ONLY) + r")\b", re.IGNORECASE)
# A date as Brazil writes it: "22 de nov. de 2026" (Portugal's is "22/11/2026").
_DATE = re.compile(r"\b\d{1,2} de [a-zç]{3,4}\. de \d{4}\b")


def brazilian_forms(text: str) -> list[str]:
    """The Brazilian-only words and dates of ``text``."""
    return _WORDS.findall(text) + _DATE.findall(text)
