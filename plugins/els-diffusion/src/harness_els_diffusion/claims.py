"""The paper's claims (filled in below)."""

CLAIMS: tuple = ()
