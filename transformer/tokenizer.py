"""A sentencepiece tokenizer with one vocabulary shared by source and target (§3.4)."""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence

import sentencepiece as spm
import torch
from torch import Tensor

PAD_ID, UNK_ID, BOS_ID, EOS_ID = 0, 1, 2, 3
SPECIAL_PIECES = ("<pad>", "<unk>", "<s>", "</s>")


class TokenizerError(ValueError):
    """A sentencepiece model that is unreadable or does not follow the fixed special ids."""


class Tokenizer:
    """Encode text to ids and back; pad=0, unk=1, bos=2, eos=3 always.

    Build one with :meth:`train` (from any iterator of sentences) or
    :meth:`from_bytes` (a serialized sentencepiece model).
    """

    pad_id, unk_id, bos_id, eos_id = PAD_ID, UNK_ID, BOS_ID, EOS_ID

    def __init__(self, processor: spm.SentencePieceProcessor, model_bytes: bytes) -> None:
        self.sp = processor
        self.model_bytes = model_bytes
        ids = (processor.pad_id(), processor.unk_id(), processor.bos_id(), processor.eos_id())
        if ids != (PAD_ID, UNK_ID, BOS_ID, EOS_ID):
            raise TokenizerError(f"tokenizer special ids are {ids}, expected (0, 1, 2, 3)")

    @classmethod
    def train(cls, sentences: Iterable[str], vocab_size: int = 1000, model_type: str = "bpe") -> Tokenizer:
        """Train a sentencepiece model on sentences (source and target together)."""
        buffer = io.BytesIO()
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(sentences),
            model_writer=buffer,
            vocab_size=vocab_size,
            model_type=model_type,
            character_coverage=1.0,
            pad_id=PAD_ID,
            unk_id=UNK_ID,
            bos_id=BOS_ID,
            eos_id=EOS_ID,
            pad_piece="<pad>",
            unk_piece="<unk>",
            bos_piece="<s>",
            eos_piece="</s>",
            hard_vocab_limit=False,
            minloglevel=2,
            num_threads=2,
        )
        return cls.from_bytes(buffer.getvalue())

    @classmethod
    def from_bytes(cls, data: bytes) -> Tokenizer:
        processor = spm.SentencePieceProcessor()
        try:
            processor.LoadFromSerializedProto(data)
        except Exception as exc:  # sentencepiece raises RuntimeError/OSError variants
            raise TokenizerError(f"not a sentencepiece model: {exc}") from None
        if processor.get_piece_size() < len(SPECIAL_PIECES):
            raise TokenizerError("sentencepiece model has too few pieces")
        return cls(processor, data)

    @property
    def vocab_size(self) -> int:
        return self.sp.get_piece_size()

    def encode(self, text: str, add_bos: bool = False, add_eos: bool = False) -> list[int]:
        ids = self.sp.encode(text)
        return ([BOS_ID] if add_bos else []) + ids + ([EOS_ID] if add_eos else [])

    def source_ids(self, text: str, max_len: int | None = None) -> list[int]:
        """The encoder's input: the pieces of text, cut to max_len - 1 when given, then EOS."""
        ids = self.sp.encode(text)
        if max_len is not None:
            ids = ids[: max_len - 1]
        return ids + [EOS_ID]

    def target_ids(self, text: str) -> tuple[list[int], list[int]]:
        """Teacher forcing: the decoder's input (BOS + pieces) and what each row must predict (pieces + EOS)."""
        ids = self.sp.encode(text)
        return [BOS_ID] + ids, ids + [EOS_ID]

    def decode(self, ids: Iterable[int]) -> str:
        return self.sp.decode([i for i in ids if i not in (PAD_ID, BOS_ID, EOS_ID)])

    def id_to_piece(self, i: int) -> str:
        return self.sp.id_to_piece(int(i))

    def pieces(self, ids: Iterable[int]) -> list[str]:
        return [self.sp.id_to_piece(int(i)) for i in ids]

    def unknown_words(self, text: str) -> list[str]:
        """Words of text that contain a character the vocabulary cannot represent."""
        unknown = []
        for word in text.split():
            if UNK_ID in self.sp.encode(word) and word not in unknown:
                unknown.append(word)
        return unknown

    def encode_with_offsets(self, text: str) -> list[tuple[int, str, int, int]]:
        """(id, piece, char_begin, char_end) for each piece of text; offsets index into text."""
        proto = self.sp.encode(text, return_type="proto")
        raw = text.encode("utf-8")
        out = []
        for p in proto.pieces:
            begin = len(raw[: p.begin].decode("utf-8", errors="ignore"))
            end = len(raw[: p.end].decode("utf-8", errors="ignore"))
            out.append((p.id, p.piece, begin, end))
        return out


def pad_batch(seqs: Sequence[Sequence[int]], pad_id: int = PAD_ID) -> Tensor:
    """Sequences of ids as one (B, T) long tensor, right-padded with pad_id to the longest."""
    out = torch.full((len(seqs), max((len(s) for s in seqs), default=0)), pad_id, dtype=torch.long)
    for i, s in enumerate(seqs):
        out[i, : len(s)] = torch.as_tensor(list(s), dtype=torch.long)
    return out


def word_groups(pieces: list[str]) -> list[list[int]]:
    """Indices of the pieces of each word: a piece starting with "▁" opens a word, the pieces after it
    join it, and special tokens (</s> ...) stand alone. For sentencepiece this is the whitespace split."""
    groups: list[list[int]] = []
    for i, p in enumerate(pieces):
        if not groups or p.startswith("▁") or p in SPECIAL_PIECES or pieces[i - 1] in SPECIAL_PIECES:
            groups.append([i])
        else:
            groups[-1].append(i)
    return groups
