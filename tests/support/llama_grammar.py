"""llama.cpp's own grammar engine as a recognizer, where llama-cpp-python and the weights are here.

Only the model's vocabulary is loaded (a fraction of a second). A text is tokenized and fed token
by token through llama.cpp's grammar sampler, as generation would: every token must be allowed,
and then the end of the turn.
"""
from __future__ import annotations

import ctypes
from pathlib import Path

import llama_cpp as llama


class LlamaRecognizer:
    def __init__(self, weights: Path):
        params = llama.llama_model_default_params()
        params.vocab_only = True
        self.model = llama.llama_model_load_from_file(str(weights).encode(), params)
        if not self.model:
            raise RuntimeError(f"llama.cpp could not load the vocabulary of {weights}")
        self.vocab = llama.llama_model_get_vocab(self.model)

    def close(self) -> None:
        llama.llama_model_free(self.model)

    def parses(self, grammar: str) -> bool:
        sampler = llama.llama_sampler_init_grammar(self.vocab, grammar.encode(), b"root")
        if sampler:
            llama.llama_sampler_free(sampler)
        return bool(sampler)

    def tokens(self, text: str) -> list[int]:
        """With special tokens parsed: `<tool_call>` is one token, as the model writes it."""
        data = text.encode()
        buffer = (llama.llama_token * (len(data) + 8))()
        count = llama.llama_tokenize(self.vocab, data, len(data), buffer, len(buffer), False, True)
        return list(buffer[:count])

    def allows(self, sampler, token: int) -> bool:
        candidates = (llama.llama_token_data * 1)(llama.llama_token_data(token, 0.0, 0.0))
        llama.llama_sampler_apply(sampler, ctypes.byref(llama.llama_token_data_array(candidates, 1, -1, False)))
        return candidates[0].logit != float("-inf")

    def matches(self, grammar: str, text: str) -> bool:
        sampler = llama.llama_sampler_init_grammar(self.vocab, grammar.encode(), b"root")
        assert sampler, "llama.cpp did not parse the grammar"
        try:
            for token in self.tokens(text):
                if not self.allows(sampler, token):
                    return False
                llama.llama_sampler_accept(sampler, token)
            return self.allows(sampler, llama.llama_vocab_eos(self.vocab))
        finally:
            llama.llama_sampler_free(sampler)
