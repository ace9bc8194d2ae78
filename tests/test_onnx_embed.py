"""The ONNX Runtime path's plumbing without the real model: which path a call takes, the
fallback, the setting, the checksummed cache, the tokenizer set-up, ``hermes model``.
(The real model's agreement and cold start: tests/test_onnx_real_model.py.)"""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from hermes.cli.app import build_app
from hermes.embed import HashEmbedder
from hermes.errors import HermesError
from hermes.ingest.pipeline import embed_new
from hermes.ingest.store import insert_items
from hermes.onnx_embed import artifact, choice
from hermes.onnx_embed.choice import BF16_BULK_TEXTS, DefaultEmbedder, backend_setting
from hermes.onnx_embed.tokenizer import batch_arrays, load_tokenizer


class Recorder(HashEmbedder):
    """Stands in for one path; remembers what it was asked."""

    def __init__(self, fail: bool = False):
        self.calls: list[int] = []
        self.fail = fail
        self._model = None  # as MiniLMEmbedder: None until the model is loaded
        self.loaded = False

    def embed_tokens(self, texts):  # embed() comes through here too (HashEmbedder)
        if self.fail:
            raise RuntimeError("no session")
        self.calls.append(len(texts))
        return super().embed_tokens(texts)


def stubbed(backend: str | None = "auto", onnx_fails: bool = False) -> DefaultEmbedder:
    embedder = DefaultEmbedder(backend)
    embedder.reference, embedder.onnx = Recorder(), Recorder(fail=onnx_fails)
    return embedder


@pytest.fixture
def no_bf16(monkeypatch):
    monkeypatch.setenv("HERMES_EMBED_BF16", "0")


# --- the setting --------------------------------------------------------------------------


def test_backend_defaults_to_auto_and_reads_env_then_config(tmp_path, monkeypatch):
    assert backend_setting() == "auto"
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text('[embed]\nbackend = "torch"\n')
    assert backend_setting() == "torch"
    monkeypatch.setenv("HERMES_EMBED_BACKEND", "ONNX")
    assert backend_setting() == "onnx"  # the environment wins, case does not matter


@pytest.mark.parametrize("value", ["gpu", "", "onnx,torch"])
def test_unknown_backend_is_an_error_naming_the_choices(monkeypatch, value):
    monkeypatch.setenv("HERMES_EMBED_BACKEND", value)
    with pytest.raises(HermesError, match="auto, onnx, torch"):
        backend_setting()


# --- the choice ---------------------------------------------------------------------------


def test_auto_embeds_few_texts_with_onnx(no_bf16):
    embedder = stubbed()
    vecs = embedder.embed(["interests text", "a clause"])
    assert vecs.shape == (2, 384)
    assert embedder.onnx.calls == [2] and embedder.reference.calls == []


def test_auto_keeps_a_loaded_reference_model(no_bf16):
    embedder = stubbed()
    embedder.reference._model = object()  # sentence-transformers is already warm here
    embedder.embed(["query"])
    assert embedder.reference.calls == [1] and embedder.onnx.calls == []


def test_auto_uses_torch_for_bulk_only_where_bf16_is_native(monkeypatch):
    monkeypatch.setenv("HERMES_EMBED_BF16", "1")
    embedder = stubbed()
    assert embedder.choose(BF16_BULK_TEXTS - 1) == "onnx"
    assert embedder.choose(BF16_BULK_TEXTS) == "torch"
    monkeypatch.setenv("HERMES_EMBED_BF16", "0")
    assert stubbed().choose(10 * BF16_BULK_TEXTS) == "onnx"


def test_the_size_from_which_auto_loads_torch_is_a_setting(tmp_path, monkeypatch):
    """``[embed] torch_from`` in config.toml, ``HERMES_EMBED_TORCH_FROM`` over it: where
    this machine's break-even lies (the default is the one measured here)."""
    monkeypatch.setenv("HERMES_EMBED_BF16", "1")
    assert choice.torch_from_setting() == BF16_BULK_TEXTS
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text("[embed]\ntorch_from = 40\n")
    embedder = stubbed()
    assert embedder.choose(39) == "onnx" and embedder.choose(40) == "torch"
    monkeypatch.setenv("HERMES_EMBED_TORCH_FROM", "1000")
    assert stubbed().choose(999) == "onnx" and stubbed().choose(1000) == "torch"
    assert stubbed("torch").choose(1) == "torch"  # a forced backend ignores it


@pytest.mark.parametrize("value", ["0", "-5", "many", "2.5", ""])
def test_a_bad_torch_from_is_an_error_naming_the_setting(monkeypatch, value):
    monkeypatch.setenv("HERMES_EMBED_TORCH_FROM", value)
    with pytest.raises(HermesError, match=r"\[embed\] torch_from"):
        choice.torch_from_setting()


def test_an_ingest_run_announces_its_size_so_small_batches_take_the_bulk_path(db, monkeypatch):
    """embed_new calls ``expect(total)``: a run of many texts embedded 64 at a time is still
    chosen as one bulk run, and the hint is used up by the run."""
    monkeypatch.setenv("HERMES_EMBED_BF16", "1")
    embedder = stubbed()
    db.execute("INSERT INTO feeds (url, title) VALUES ('x', 'x')")
    insert_items(db, 1, [{"guid": f"g{k}", "title": f"item {k}"} for k in range(BF16_BULK_TEXTS)])
    assert embed_new(db, embedder) == BF16_BULK_TEXTS
    assert sum(embedder.reference.calls) == BF16_BULK_TEXTS and embedder.onnx.calls == []
    assert embedder.choose(3) == "onnx"


def test_forced_backends_are_obeyed(monkeypatch):
    monkeypatch.setenv("HERMES_EMBED_BF16", "1")
    assert stubbed("onnx").choose(10 * BF16_BULK_TEXTS) == "onnx"
    forced = stubbed("torch")
    forced.embed(["one"])
    assert forced.reference.calls == [1] and forced.onnx.calls == []


def test_without_onnxruntime_auto_uses_sentence_transformers(monkeypatch, no_bf16):
    monkeypatch.setattr(choice, "onnx_installed", lambda: False)
    embedder = stubbed()
    embedder.embed(["query"])
    assert embedder.reference.calls == [1]


def test_a_failing_onnx_path_falls_back_once_and_says_so(no_bf16, caplog):
    embedder = stubbed(onnx_fails=True)
    with caplog.at_level(logging.WARNING):
        embedder.embed(["query"])
    assert embedder.reference.calls == [1]
    assert "using sentence-transformers" in caplog.text
    assert embedder.choose(1) == "torch"  # not retried on every call


def test_a_failing_onnx_path_is_an_error_when_onnx_was_asked_for():
    with pytest.raises(HermesError, match="hermes model prepare --force"):
        stubbed("onnx", onnx_fails=True).embed(["query"])


# --- the cached file ----------------------------------------------------------------------


@pytest.fixture
def fake_weights(tmp_path, monkeypatch):
    weights = tmp_path / "weights"
    weights.mkdir()
    for name in artifact.SOURCE_FILES:
        (weights / name).write_bytes(name.encode() * 100)
    monkeypatch.setattr(artifact, "weights_dir", lambda: weights)
    monkeypatch.setenv("HERMES_MODEL_CACHE", str(tmp_path / "cache"))
    return weights


@pytest.fixture
def fake_export(monkeypatch):
    made = []

    def export(weights, out):
        made.append(out)
        out.write_bytes(b"onnx")
        return {"verify_min_cosine": 1.0}

    monkeypatch.setattr(artifact, "export_onnx", export)
    return made


def test_prepare_exports_once_into_a_directory_named_by_the_weights(fake_weights, fake_export):
    assert artifact.cached_model() is None
    path = artifact.prepare(announce=False)
    checksum = artifact.source_checksum()
    assert path.parent == artifact.artifact_dir(checksum) and path.read_bytes() == b"onnx"
    meta = json.loads((path.parent / artifact.META_FILE).read_text())
    assert meta["source_sha256"] == checksum and meta["format"] == artifact.EXPORT_FORMAT
    assert artifact.prepare() == path and len(fake_export) == 1  # cached: no second export
    artifact.prepare(force=True, announce=False)
    assert len(fake_export) == 2
    assert not [p for p in path.parent.parent.iterdir() if p.name.startswith(".export-")]


def test_new_weights_need_a_new_export(fake_weights, fake_export):
    first = artifact.prepare(announce=False)
    (fake_weights / "model.safetensors").write_bytes(b"other weights, other size")
    assert artifact.cached_model() is None
    second = artifact.prepare(announce=False)
    assert second.parent != first.parent and len(fake_export) == 2


def test_a_stale_export_format_is_not_used(fake_weights, fake_export):
    path = artifact.prepare(announce=False)
    meta_file = path.parent / artifact.META_FILE
    meta = json.loads(meta_file.read_text())
    meta_file.write_text(json.dumps({**meta, "format": artifact.EXPORT_FORMAT - 1}))
    assert artifact.cached_model() is None
    assert artifact.prepare(announce=False) == path and len(fake_export) == 2


def test_checksum_is_remembered_by_file_stamp(fake_weights, monkeypatch):
    first = artifact.source_checksum()
    assert json.loads((artifact.cache_root() / "sources.json").read_text())["sha256"] == first
    monkeypatch.setattr(artifact.hashlib, "sha256", None)  # a cold process must not hash again
    assert artifact.source_checksum() == first


def test_missing_weights_say_how_to_fix_it(tmp_path, monkeypatch):
    monkeypatch.setattr(artifact, "weights_dir", lambda: tmp_path / "nowhere")
    with pytest.raises(HermesError, match="reinstall hermes"):
        artifact.source_checksum()


# --- the tokenizer (the packaged tokenizer.json pads and cuts at 128) ----------------------


def test_tokenizer_cuts_at_256_and_pads_per_batch_not_to_128():
    tokenizer = load_tokenizer(artifact.weights_dir())
    short, long = tokenizer.encode_batch(["quantum error correction", "word " * 400])
    assert len(short.ids) == 5 and short.ids[0] == 101 and short.ids[-1] == 102
    assert len(long.ids) == 256 and long.ids[-1] == 102
    feeds = batch_arrays([short, long])
    assert feeds["input_ids"].shape == (2, 256) and feeds["attention_mask"][0].sum() == 5
    assert not feeds["token_type_ids"].any()


def test_token_counts_come_from_the_tokenizer_alone(tmp_path, monkeypatch):
    """Counting tokens (how ingest groups texts into batches) loads neither model: no
    session, no ONNX file made, no sentence-transformers model."""
    monkeypatch.setenv("HERMES_MODEL_CACHE", str(tmp_path / "empty-cache"))
    embedder = DefaultEmbedder("auto")
    # [CLS] and [SEP] count; a long text is cut at 256 as the model sees it.
    assert embedder.token_counts(["quantum error correction", "  word " * 400, ""]) == [5, 256, 2]
    assert not embedder.onnx.loaded and artifact.cached_model() is None
    assert embedder.reference._model is None


def test_texts_counted_for_batching_are_not_tokenized_again():
    """Ingest counts a window's tokens, then embeds its batches: the encodings are reused,
    and texts not counted are still encoded (the same ids either way)."""
    from hermes.onnx_embed.runtime import OnnxMiniLMEmbedder

    embedder = OnnxMiniLMEmbedder()
    real = embedder.tokenizer()

    class Spy:
        calls: list[list[str]] = []

        def encode_batch(self, texts):
            self.calls.append(list(texts))
            return real.encode_batch(texts)

    embedder._tokenizer = Spy()
    embedder.token_counts(["graph neural networks", " a longer text about qubits "])
    encodings = embedder._encode(["a longer text about qubits", "graph neural networks", "new"])
    assert Spy.calls == [["graph neural networks", "a longer text about qubits"], ["new"]]
    want = real.encode_batch(["a longer text about qubits", "graph neural networks", "new"])
    assert [e.ids for e in encodings] == [e.ids for e in want]


def test_model_calls_are_capped_in_padded_tokens_longest_first():
    """Long texts go 16 to a call (16 x 256 tokens), short ones up to the batch size; every
    row once, longest first."""
    from hermes.onnx_embed.runtime import batches

    lengths = [256] * 20 + [100] * 50 + [10] * 100 + [5000]
    calls = [rows.tolist() for rows in batches(lengths, max_texts=64, max_tokens=4096)]
    assert calls[0] == [170]  # wider than the cap alone: still embedded, one to a call
    sizes = [len(c) for c in calls[1:]]
    assert sizes == [16, 16, 40, 64, 34]  # 256-wide: 16; 100-wide: 40; 10-wide: the batch size
    assert all(max(lengths[r] for r in c) * len(c) <= 4096 for c in calls[1:])
    assert max(sizes) == 64 and sorted(r for c in calls for r in c) == list(range(len(lengths)))
    widths = [lengths[c[0]] for c in calls]
    assert widths == sorted(widths, reverse=True)


# --- hermes model -------------------------------------------------------------------------


def test_model_status_reports_the_path_without_loading_anything(no_bf16, tmp_path, monkeypatch):
    monkeypatch.setenv("HERMES_MODEL_CACHE", str(tmp_path / "empty-cache"))
    result = CliRunner().invoke(build_app(), ["model", "status", "--json"])
    assert result.exit_code == 0, result.output
    info = json.loads(result.output)
    assert info["backend"] == "auto" and info["path_for_few_texts"] == "onnx"
    assert info["onnx_model"] is None and len(info["weights_sha256"]) == 64


def test_model_prepare_exports_then_reports_it_is_prepared(fake_weights, fake_export):
    app = build_app()
    first = CliRunner().invoke(app, ["model", "prepare"])
    assert first.exit_code == 0, first.output
    assert "exported:" in first.output and len(fake_export) == 1
    again = CliRunner().invoke(app, ["model", "prepare", "--json"])
    assert json.loads(again.stdout)["exported"] is False and len(fake_export) == 1


def test_model_status_rejects_a_bad_setting(monkeypatch):
    monkeypatch.setenv("HERMES_EMBED_BACKEND", "cuda")
    result = CliRunner().invoke(build_app(), ["model", "status"])
    assert result.exit_code == 1 and "use one of: auto, onnx, torch" in result.output


def test_vectors_keep_the_reference_models_name(no_bf16):
    from hermes.embed import MiniLMEmbedder

    embedder = stubbed()
    assert (embedder.name, embedder.dimension) == (MiniLMEmbedder.name, MiniLMEmbedder.dimension)
    assert np.allclose(np.linalg.norm(embedder.embed(["a", "b c"]), axis=1), 1)


def test_token_vectors_from_the_graph_drop_padding_and_special_tokens():
    """The ONNX path's token vectors for the keyphrase tagger: [CLS] / [SEP] (empty spans)
    and padding left out, spans moved back to the caller's unstripped text."""
    from types import SimpleNamespace

    from hermes.onnx_embed.runtime import _token_vectors

    hidden = np.arange(5 * 3, dtype=np.float32).reshape(5, 3)  # 4 tokens + 1 padding row
    encoding = SimpleNamespace(offsets=[(0, 0), (0, 5), (6, 10), (0, 0)])
    tokens = _token_vectors(hidden, encoding, shift=2)
    assert tokens.spans.tolist() == [[2, 7], [8, 12]]
    assert tokens.vectors.tolist() == [hidden[1].tolist(), hidden[2].tolist()]


def test_the_default_embedder_gives_token_vectors_through_the_chosen_path(no_bf16):
    embedder = stubbed()
    vectors, tokens = embedder.embed_tokens(["graph neural networks"])
    assert embedder.onnx.calls == [1] and vectors.shape == (1, 384) and len(tokens[0].spans) == 3


# --- loading ahead of an ingest run ---------------------------------------------------------


class Loading(Recorder):
    def load(self):
        self.loaded = True


def test_prewarm_loads_the_path_the_announced_run_will_use(monkeypatch):
    """An ingest run announces its size before the model is loaded ahead of it: a bulk run
    on a CPU with native bf16 loads sentence-transformers only, never both models."""
    monkeypatch.setenv("HERMES_EMBED_BF16", "1")
    embedder = stubbed()
    embedder.reference, embedder.onnx = Loading(), Loading()
    embedder.expect(BF16_BULK_TEXTS)
    embedder.load()
    assert embedder.reference.loaded and not embedder.onnx.loaded
    small = stubbed()
    small.reference, small.onnx = Loading(), Loading()
    small.load()  # nothing announced: a few texts, ONNX Runtime
    assert small.onnx.loaded and not small.reference.loaded


def test_an_ingest_run_loads_the_model_it_embeds_with_ahead_of_it(db, monkeypatch):
    from hermes.ingest.pipeline import add_feeds, run_ingest, sample_feed_paths

    monkeypatch.setenv("HERMES_EMBED_BF16", "1")
    monkeypatch.setenv("HERMES_EMBED_TORCH_FROM", "100")  # the samples' 300 a bulk run
    add_feeds(db, [(str(p), None) for p in sample_feed_paths()])
    embedder = stubbed()
    embedder.reference, embedder.onnx = Loading(), Loading()
    summary = run_ingest(db, embedder=embedder)
    assert summary.embedded >= 300
    # The first feed alone may be a small run (ONNX Runtime, loaded at once); once the
    # stored items make it a bulk run that saves more than that load, sentence-transformers
    # is loaded ahead of embedding.
    assert embedder.reference.loaded
    assert embedder.onnx.calls == [] and sum(embedder.reference.calls) == summary.embedded


def test_a_run_stays_on_onnx_when_its_load_is_paid_and_torch_would_not_win_back_its_own(db, monkeypatch):
    """The samples' 300 items in a fresh process: the first feed (a small run) loads ONNX
    Runtime; then 300 texts do not pay back torch's load on top (issue 36: a first ingest
    loads one model path; with the threshold alone it loaded both)."""
    from hermes.ingest.pipeline import add_feeds, run_ingest, sample_feed_paths

    monkeypatch.setenv("HERMES_EMBED_BF16", "1")
    add_feeds(db, [(str(p), None) for p in sample_feed_paths()])
    embedder = stubbed()
    embedder.reference, embedder.onnx = Loading(), Loading()
    summary = run_ingest(db, embedder=embedder)
    assert summary.embedded == 300 == BF16_BULK_TEXTS
    assert embedder.onnx.loaded and not embedder.reference.loaded
    assert sum(embedder.onnx.calls) == summary.embedded and embedder.reference.calls == []


def test_auto_counts_the_load_of_each_path_not_loaded_yet(monkeypatch):
    """Torch where it finishes sooner in total: in a fresh process from the break-even
    (``torch_from``); with ONNX Runtime loaded already, only once the run is long enough
    for torch's per-text saving to pay for all of torch's load."""
    monkeypatch.setenv("HERMES_EMBED_BF16", "1")
    fresh = stubbed()
    assert fresh.choose(BF16_BULK_TEXTS - 1) == "onnx" and fresh.choose(BF16_BULK_TEXTS) == "torch"
    warm = stubbed()
    warm.onnx.loaded = True  # the refresh worker, a server that ranked with it
    later = math.ceil(choice.TORCH_LOAD_CPU / (choice.TORCH_LOAD_CPU - choice.ONNX_LOAD_CPU) * BF16_BULK_TEXTS)
    assert warm.choose(BF16_BULK_TEXTS) == "onnx" and warm.choose(later - 1) == "onnx"
    assert warm.choose(later) == "torch"
    for n in (1, 100, BF16_BULK_TEXTS, 1000):  # the estimate behind it: load + work per text
        onnx, torch = (choice.run_cost(p, n, loaded=False) for p in ("onnx", "torch"))
        assert (torch <= onnx) == (n >= BF16_BULK_TEXTS)
        assert choice.run_cost("onnx", n, loaded=True) == pytest.approx(onnx - choice.ONNX_LOAD_CPU)


class RecordingEmbedder(HashEmbedder):
    """The hash embedder, keeping the texts of each call (how the ingest batched them)."""

    def __init__(self):
        super().__init__()
        self.calls: list[list[str]] = []

    def embed(self, texts):
        self.calls.append(list(texts))
        return super().embed(texts)


def test_pending_items_are_embedded_in_batches_of_similar_length(db):
    """Each call gets texts of similar length (a batch is padded to its longest text), and
    every item is embedded exactly once."""
    from hermes.ingest.store import embed_pending

    db.execute("INSERT INTO feeds (url, title) VALUES ('x', 'x')")
    lengths = [3, 40, 5, 38, 4, 39, 6, 41]
    insert_items(db, 1, [{"guid": f"g{k}", "title": "w " * n} for k, n in enumerate(lengths)])
    embedder = RecordingEmbedder()
    assert embed_pending(db, embedder, batch_size=2, tag=False) == len(lengths)
    sizes = [[len(t) for t in call] for call in embedder.calls]
    assert all(len(call) == 2 for call in sizes)
    flat = [n for call in sizes for n in call]
    assert flat == sorted(flat, reverse=True)
    assert db.execute("SELECT count(*) FROM items WHERE embedding IS NULL").fetchone()[0] == 0


def test_a_run_of_a_thousand_items_is_sorted_by_length_as_one(db):
    """The length sort spans a whole run of up to 1,024 items at the default batch size
    (issue 36): sorted in windows of 512, a fresh ingest of 1,000 abstracts padded 0.8 %
    more tokens (1.2 % more attention work) and made 55 model calls where the same texts in
    one sort make 50."""
    from hermes.ingest.store import embed_pending

    db.execute("INSERT INTO feeds (url, title) VALUES ('x', 'x')")
    lengths = [(k * 37) % 200 + 1 for k in range(1000)]
    insert_items(db, 1, [{"guid": f"g{k}", "title": "w " * n} for k, n in enumerate(lengths)])
    embedder = RecordingEmbedder()
    assert embed_pending(db, embedder, tag=False) == 1000
    flat = [len(t) for call in embedder.calls for t in call]
    assert flat == sorted(flat, reverse=True) and len(embedder.calls) == 16


def test_pending_items_are_grouped_by_token_count_when_the_embedder_counts_tokens(db):
    """A batch is padded to its longest text in tokens, not characters: an embedder that
    counts tokens (``token_counts``) gets batches of similar token counts, even where the
    character lengths say otherwise."""
    from hermes.ingest.store import embed_pending

    class Counted(HashEmbedder):
        calls: list[list[str]] = []

        def token_counts(self, texts):  # one token per character of "x", ten per "y"
            return [t.count("x") + 10 * t.count("y") for t in texts]

        def embed(self, texts):
            self.calls.append(list(texts))
            return super().embed(texts)

    db.execute("INSERT INTO feeds (url, title) VALUES ('x', 'x')")
    titles = ["x" * 30, "y" * 5, "x" * 31, "y" * 4]  # tokens: 30, 50, 31, 40
    insert_items(db, 1, [{"guid": f"g{k}", "title": t} for k, t in enumerate(titles)])
    embedder = Counted()
    assert embed_pending(db, embedder, batch_size=2, tag=False) == 4
    assert [sorted(call) for call in embedder.calls] == [["y" * 4, "y" * 5], ["x" * 30, "x" * 31]]


def test_batches_go_through_onnx_while_the_bulk_model_is_still_loading(monkeypatch):
    """A bulk run whose sentence-transformers model is still loading (prewarm, on another
    thread) embeds its batches through ONNX Runtime meanwhile — only when the setting is
    auto and ONNX Runtime is loaded in the process already (loading it too would put both
    model paths in one ingest, issue 36)."""
    monkeypatch.setenv("HERMES_EMBED_BF16", "1")
    embedder = stubbed()
    embedder.onnx.loaded = True  # as in a server that ranked with it
    embedder.expect(2 * BF16_BULK_TEXTS)
    embedder.reference.loading = True
    embedder.embed(["a"] * 64)
    assert embedder.onnx.calls == [64] and embedder.reference.calls == []
    embedder.reference.loading = False
    embedder.embed(["a"] * 64)
    assert embedder.reference.calls == [64]
    forced = stubbed("torch")
    forced.onnx.loaded = True
    forced.reference.loading = True
    forced.embed(["a"] * 64)
    assert forced.onnx.calls == [] and forced.reference.calls == [64]


def test_no_bridge_when_the_onnx_model_is_not_loaded_in_the_process(monkeypatch):
    """A first ingest loads one model path (issue 36): the ONNX model made on disk is not
    loaded for the seconds torch takes to load."""
    monkeypatch.setenv("HERMES_EMBED_BF16", "1")
    embedder = stubbed()
    embedder.onnx.model_path = "made"  # as if `hermes model prepare` had run
    embedder.onnx.loaded = False
    embedder.expect(2 * BF16_BULK_TEXTS)
    embedder.reference.loading = True
    embedder.embed(["a"] * 64)
    assert embedder.onnx.calls == [] and embedder.reference.calls == [64]


def test_the_model_copy_is_one_per_user_whatever_the_data_folder(monkeypatch, tmp_path):
    """A copy per HERMES_HOME made a new data folder pay 38 s for the export again
    (issue 36): the copy lives in the user cache folder; HERMES_MODEL_CACHE still wins."""
    import platformdirs

    monkeypatch.delenv("HERMES_MODEL_CACHE", raising=False)
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "one"))
    first = artifact.cache_root()
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "two"))
    assert artifact.cache_root() == first
    assert first == Path(platformdirs.user_cache_dir("hermes")) / "models"
    monkeypatch.setenv("HERMES_MODEL_CACHE", str(tmp_path / "mine"))
    assert artifact.cache_root() == tmp_path / "mine"
