"""``hermes model prepare`` / ``hermes model status``: make the ONNX copy of the model ahead
of its first use, and show which path embeds what."""

from __future__ import annotations

import time
from importlib import metadata
from typing import Annotated

import typer

from ..embed import cpu_has_fast_bf16, use_bf16
from ..facekit.terminal import JsonOption, emit_json, run_guarded
from . import artifact
from .choice import DefaultEmbedder, backend_setting, onnx_installed


def status() -> dict:
    """What ``hermes model status`` reports (no model is loaded)."""
    chooser = DefaultEmbedder(backend_setting())
    model = artifact.cached_model()
    try:
        ort_version = metadata.version("onnxruntime") if onnx_installed() else None
    except metadata.PackageNotFoundError:
        ort_version = None
    return {
        "model": chooser.name,
        "backend": chooser.backend(),
        "onnxruntime": ort_version,
        "onnx_model": str(model) if model else None,
        "weights": str(artifact.weights_dir()),
        "weights_sha256": artifact.source_checksum(),
        "cpu_native_bf16": cpu_has_fast_bf16(),
        "bf16": use_bf16(),
        "path_for_few_texts": chooser.choose(1),
        "path_for_bulk": chooser.choose(chooser.torch_from()),
        "bulk_texts": chooser.torch_from(),
    }


def prepare_command(
    force: Annotated[bool, typer.Option("--force", help="Export again even if a copy exists.")] = False,
    as_json: JsonOption = False,
):
    """Make the ONNX copy of all-MiniLM-L6-v2 from the packaged weights (once; otherwise its
    first use does it). Needs no network."""
    started = time.perf_counter()
    existing = None if force else run_guarded(artifact.cached_model)
    if existing is None:
        typer.echo("exporting all-MiniLM-L6-v2 to ONNX from the packaged weights (about half a minute) …", err=True)
    path = existing or run_guarded(artifact.prepare, force, announce=False)
    meta = artifact.read_meta(path.parent) or {}
    result = {
        "ok": True,
        "path": str(path),
        "exported": existing is None,
        "seconds": round(time.perf_counter() - started, 1),
        "weights_sha256": meta.get("source_sha256"),
        "verify_min_cosine": meta.get("verify_min_cosine"),
    }
    if as_json:
        emit_json(result)
        return
    verb = "exported" if result["exported"] else "already prepared"
    typer.echo(f"{verb}: {path}")
    typer.echo(
        f"  from weights sha256 {result['weights_sha256']}; agrees with the torch model to "
        f"cosine {result['verify_min_cosine']}"
    )


def status_command(as_json: JsonOption = False):
    """Show which path embeds texts (ONNX Runtime or sentence-transformers) and why."""
    info = run_guarded(status)
    if as_json:
        emit_json(info)
        return
    typer.echo(f"model: {info['model']}")
    typer.echo(f"backend setting: {info['backend']}  (HERMES_EMBED_BACKEND or [embed] backend: auto, onnx, torch)")
    typer.echo(f"onnxruntime: {info['onnxruntime'] or 'not installed'}")
    typer.echo(f"ONNX copy: {info['onnx_model'] or 'not made yet (hermes model prepare)'}")
    typer.echo(
        f"CPU with native bf16: {'yes' if info['cpu_native_bf16'] else 'no'}; "
        f"sentence-transformers in {'bf16' if info['bf16'] else 'fp32'}"
    )
    typer.echo(f"a few texts (interests, queries, saved items): {info['path_for_few_texts']}")
    typer.echo(
        f"a run of {info['bulk_texts']}+ texts (ingest): {info['path_for_bulk']}  "
        "([embed] torch_from or HERMES_EMBED_TORCH_FROM)"
    )


def register(app: typer.Typer) -> None:
    model = typer.Typer(help="The embedding model: prepare its ONNX copy, show which path runs.", no_args_is_help=True)
    model.command("prepare")(prepare_command)
    model.command("status")(status_command)
    app.add_typer(model, name="model")
