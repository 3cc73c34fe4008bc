"""The FDIC replica site: the Failed Bank List, BankFind's failures and assistance search and a
page per bank, rendered from `bank_failures`.

The Failed Bank List holds failures only; BankFind lists assistance transactions (open banks the
FDIC assisted, which did not fail) beside them unless told otherwise, as the FDIC's sites do. Only
BankFind and the bank pages show assets, deposits and estimated losses.
"""
