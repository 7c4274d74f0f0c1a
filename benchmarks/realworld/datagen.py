"""Small local stand-ins for the data real TF 1.x scripts download: one generator per kind.

The manifest names a generator and where its output goes (`data = ["mnist:MNIST_data"]`).
Every generator is a pure function of its arguments (fixed seeds), writes in well under a
second, and uses only the standard library and NumPy (plus TensorFlow's TFRecord writer for
BERT's pre-training records, and Pillow for JPEGs), so what the scripts read is the same on
every run and nothing is downloaded.

Words come from a fixed synthetic vocabulary (syllable pairs) drawn with Zipf-like
frequencies, so word2vec and text models see a long-tailed distribution as in real text.
"""
from __future__ import annotations

import importlib.util
import json
import random
import shutil
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_SYLLABLES = ("ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pa", "qui", "do", "fe", "gu", "ha",
              "jo", "bi", "ce", "wy", "xa")


def _make_mnist_module():
    spec = importlib.util.spec_from_file_location("make_mnist", ROOT / "fixtures" / "data" / "make_mnist.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def vocabulary(size: int = 400) -> list[str]:
    """`size` distinct lowercase words, always the same ones."""
    words = [a + b for a in _SYLLABLES for b in _SYLLABLES]
    words += [a + b + c for a in _SYLLABLES for b in _SYLLABLES for c in _SYLLABLES[:5]]
    return words[:size]


def sentences(count: int, seed: int = 0, low: int = 4, high: int = 12, vocab_size: int = 400) -> list[str]:
    """`count` sentences of `low`..`high` words with Zipf-like word frequencies."""
    rng = random.Random(seed)
    vocab = vocabulary(vocab_size)
    weights = [1.0 / (rank + 1) for rank in range(len(vocab))]
    return [" ".join(rng.choices(vocab, weights, k=rng.randint(low, high))) for _ in range(count)]


# ---- the generators: gen(target: Path) writes at target (a file or a folder) -----------------
def mnist(target: Path) -> None:
    """The four MNIST IDX files, gzipped (what `input_data.read_data_sets` reads)."""
    _make_mnist_module().write_mnist(target)


def mnist_raw(target: Path) -> None:
    """The four MNIST IDX files, not gzipped (scripts that parse the IDX files themselves)."""
    _make_mnist_module().write_mnist(target, compress=False)


def text8_zip(target: Path) -> None:
    """A zip holding one file `text8`: lowercase words separated by spaces, 60k words."""
    target.parent.mkdir(parents=True, exist_ok=True)
    words = " ".join(sentences(6000, seed=8, low=8, high=12, vocab_size=2000))
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        info = zipfile.ZipInfo("text8", date_time=(2000, 1, 1, 0, 0, 0))
        archive.writestr(info, words)


def text_lines(target: Path) -> None:
    """Plain text, one sentence a line (char-RNN corpora: abstracts, tweets)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    lines = [s.capitalize() + "." for s in sentences(400, seed=11, low=10, high=30)]
    target.write_text("\n".join(lines) + "\n")


def jpeg(target: Path) -> None:
    """A 64x64 RGB JPEG with a smooth gradient and a square (image-filter demos)."""
    import numpy as np
    from PIL import Image

    target.parent.mkdir(parents=True, exist_ok=True)
    y, x = np.mgrid[0:64, 0:64]
    image = np.stack([x * 4, y * 4, (x + y) * 2], axis=-1).astype(np.uint8)
    image[20:44, 20:44] = (230, 40, 40)
    Image.fromarray(image).save(target, format="JPEG", quality=90)


def font(target: Path) -> None:
    """A TrueType font file (matplotlib's own DejaVu Sans) where a script loads one by path."""
    import matplotlib

    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf", target)


def rt_polarity(target: Path) -> None:
    """Sentence polarity data: `rt-polarity.pos` and `rt-polarity.neg`, 300 lines each."""
    target.mkdir(parents=True, exist_ok=True)
    for name, seed, marker in (("rt-polarity.pos", 1, "good"), ("rt-polarity.neg", 2, "bad")):
        lines = [f"{s} {marker} ." for s in sentences(300, seed=seed)]
        (target / name).write_text("\n".join(lines) + "\n", encoding="utf-8")


def cornell_dialogs(target: Path) -> None:
    """A Cornell movie-dialogs-format corpus: `movie_lines.txt` and `movie_conversations.txt`.

    30,000 exchanges of short lines, above the 25,000-pair test split the chatbot assignment
    takes out before training; 1,500 words, above its sampled softmax's NUM_SAMPLES (512): with
    a smaller vocabulary the assignment never sets its output projection and stops (on TF 1.x
    too)."""
    target.mkdir(parents=True, exist_ok=True)
    sep = " +++$+++ "
    texts = sentences(60000, seed=5, low=2, high=8, vocab_size=1500)
    lines, convos = [], []
    for i in range(0, len(texts), 2):
        a, b = f"L{i}", f"L{i + 1}"
        lines.append(sep.join([a, "u0", "m0", "ANNA", texts[i]]))
        lines.append(sep.join([b, "u1", "m0", "BEN", texts[i + 1]]))
        convos.append(sep.join(["u0", "u1", "m0", str([a, b])]))
    (target / "movie_lines.txt").write_text("\n".join(lines) + "\n")
    (target / "movie_conversations.txt").write_text("\n".join(convos) + "\n")


def bert(target: Path) -> None:
    """A tiny BERT set-up: `vocab.txt`, `bert_config.json` (2 layers, hidden 32), CoLA-format
    `cola/train.tsv` and `cola/dev.tsv`, a SQuAD-1.1-format `squad/train.json`, and pre-training
    records `pretrain.tfrecord` in `create_pretraining_data.py`'s feature layout."""
    target.mkdir(parents=True, exist_ok=True)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", ","] + vocabulary(200)
    (target / "vocab.txt").write_text("\n".join(vocab) + "\n")
    config = {"attention_probs_dropout_prob": 0.1, "hidden_act": "gelu", "hidden_dropout_prob": 0.1,
              "hidden_size": 32, "initializer_range": 0.02, "intermediate_size": 64,
              "max_position_embeddings": 64, "num_attention_heads": 2, "num_hidden_layers": 2,
              "type_vocab_size": 2, "vocab_size": len(vocab)}
    (target / "bert_config.json").write_text(json.dumps(config, indent=2) + "\n")
    cola = target / "cola"
    cola.mkdir(exist_ok=True)
    for name, seed in (("train.tsv", 3), ("dev.tsv", 4)):
        rows = [f"src\t{i % 2}\t*\t{s} ." for i, s in enumerate(sentences(64, seed=seed, vocab_size=200))]
        (cola / name).write_text("\n".join(rows) + "\n")
    _squad(target / "squad")
    _pretraining_records(target / "pretrain.tfrecord", len(vocab))


def _squad(folder: Path) -> None:
    folder.mkdir(exist_ok=True)
    paragraphs = []
    for i, context in enumerate(sentences(16, seed=7, low=12, high=20, vocab_size=200)):
        words = context.split()
        answer = words[3]
        start = len(" ".join(words[:3])) + 1
        paragraphs.append({"context": context, "qas": [{
            "id": f"q{i}", "question": " ".join(words[:2]) + " ?",
            "answers": [{"text": answer, "answer_start": start}]}]})
    data = {"version": "1.1", "data": [{"title": "synthetic", "paragraphs": paragraphs}]}
    (folder / "train.json").write_text(json.dumps(data) + "\n")


def _pretraining_records(path: Path, vocab_size: int, count: int = 32, seq: int = 32, preds: int = 5) -> None:
    import numpy as np
    import tensorflow as tf

    rng = np.random.default_rng(9)

    def ints(values):
        return tf.train.Feature(int64_list=tf.train.Int64List(value=[int(v) for v in values]))

    with tf.io.TFRecordWriter(str(path)) as writer:
        for _ in range(count):
            ids = rng.integers(5, vocab_size, size=seq)
            ids[0], ids[seq // 2], ids[-1] = 2, 3, 3
            features = {
                "input_ids": ints(ids), "input_mask": ints([1] * seq),
                "segment_ids": ints([0] * (seq // 2 + 1) + [1] * (seq - seq // 2 - 1)),
                "masked_lm_positions": ints(sorted(rng.choice(range(1, seq // 2), preds, replace=False))),
                "masked_lm_ids": ints(rng.integers(5, vocab_size, size=preds)),
                "masked_lm_weights": tf.train.Feature(float_list=tf.train.FloatList(value=[1.0] * preds)),
                "next_sentence_labels": ints([int(rng.integers(0, 2))]),
            }
            writer.write(tf.train.Example(features=tf.train.Features(feature=features)).SerializeToString())


# The most frequent English words (any English word list starts with these), so that a GloVe
# stand-in shares a vocabulary with English text as the real one does.
_ENGLISH = ("the of and to a in is it you that he was for on are with as i his they be at one have this from "
            "or had by not word but what some we can out other were all there when up use your how said an "
            "each she which do their time if will way about many then them write would like so these her long "
            "make thing see him two has look more day could go come did number sound no most people my over "
            "know water than call first who may down side been now find any new work part take get place made "
            "live where after back little only round man year came show every good me give our under name very "
            "through just form sentence great think say help low line differ turn cause much mean before move "
            "right boy old too same tell does set three want air well also play small end put home read hand "
            "port large spell add even land here must big high such follow act why ask men change went light "
            "kind off need house picture try us again animal point mother world near build self earth father").split()


def glove_300d(target: Path) -> None:
    """A GloVe-format text file (`word v1 ... v300`, like glove.6B.300d.txt): 200 common English
    words and 300 synthetic ones, each with a fixed random 300-dimensional vector."""
    import numpy as np

    target.parent.mkdir(parents=True, exist_ok=True)
    words = list(dict.fromkeys(_ENGLISH)) + vocabulary(300)
    vectors = np.random.default_rng(6).normal(0.0, 0.4, size=(len(words), 300))
    lines = [w + " " + " ".join(f"{v:.5f}" for v in row) for w, row in zip(words, vectors)]
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")


def knifey_spoony(target: Path) -> None:
    """Hvass-Labs' Knifey-Spoony layout: `forky/`, `knifey/`, `spoony/`, each with 12 training and
    4 test (`test/`) 200x200 RGB JPEGs (a class-coloured shape on noise), and the tarball
    `knifey-spoony.tar.gz` of the same files beside them, as left by its download step."""
    import io
    import tarfile

    import numpy as np
    from PIL import Image

    target.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(12)
    files = []
    for number, name in enumerate(("forky", "knifey", "spoony")):
        for sub, count in (("", 12), ("test", 4)):
            for i in range(count):
                image = rng.integers(0, 80, size=(200, 200, 3), dtype=np.uint8)
                lo, hi = 40 + 30 * number, 160 - 20 * number
                image[lo:hi, 90 - 25 * number:110 + 25 * number, number] = 230
                buffer = io.BytesIO()
                Image.fromarray(image).save(buffer, format="JPEG", quality=85)
                files.append(("/".join(p for p in (name, sub, f"{name}-{i:02d}.jpg") if p), buffer.getvalue()))
    for rel, data in files:
        path = target / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    with tarfile.open(target / "knifey-spoony.tar.gz", "w:gz") as tar:
        for rel, data in files:
            info = tarfile.TarInfo(rel)
            info.size, info.mtime = len(data), 946684800
            tar.addfile(info, io.BytesIO(data))


GENERATORS = {
    "mnist": mnist,
    "mnist-raw": mnist_raw,
    "text8-zip": text8_zip,
    "text-lines": text_lines,
    "jpeg": jpeg,
    "font": font,
    "rt-polarity": rt_polarity,
    "cornell-dialogs": cornell_dialogs,
    "bert": bert,
    "glove-300d": glove_300d,
    "knifey-spoony": knifey_spoony,
}


def generate(name: str, target: Path) -> None:
    """Run generator `name` at `target`; KeyError names the known ones."""
    try:
        gen = GENERATORS[name]
    except KeyError:
        raise KeyError(f"unknown data generator {name!r}; known: {', '.join(sorted(GENERATORS))}") from None
    gen(target)
