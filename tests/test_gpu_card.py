"""Which card a GPU result ran on: nvidia-smi's UUID of the card at the CUDA device's PCI address
(nsprof.launch.gpu.card_uuid), and the diff's warning when two bench records of one model ran on different cards,
which moved single HGEMM shapes by 2-3 points between H200s (benchmarks/records/2026-11-30-h200-hgemm-pairs-maps)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from nsprof import api
from nsprof.launch import gpu

RECORDS = Path("benchmarks/records")
# two cards of one host as nvidia-smi --query-gpu=driver_version,pci.bus_id,uuid --format=csv,noheader lists them
SMI = ("580.159.04, 00000000:18:00.0, GPU-e487f033-d157-79c5-68cc-83cdf14aa60d\n"
       "580.159.04, 00000000:3B:00.0, GPU-e977470a-3b44-979e-4664-34ab1d37f11e\n")


def test_the_card_is_the_one_at_the_devices_pci_address(monkeypatch):
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(a, 0, stdout=SMI))
    rows = gpu._nvidia_smi("driver_version,pci.bus_id,uuid")
    assert gpu.card_uuid(rows, (0, 0x3B, 0)) == "GPU-e977470a-3b44-979e-4664-34ab1d37f11e"
    assert gpu.card_uuid(rows, (0, 0x18, 0)).startswith("GPU-e487f033")
    assert gpu.card_uuid(rows, (1, 0x3B, 0)) is None and gpu.card_uuid([["580.159.04", "bad", "GPU-x"]], (0, 0, 0)) is None
    assert gpu.nvidia_driver_version() == "580.159.04"


def test_without_nvidia_smi_there_is_no_card_and_no_driver(monkeypatch):
    def missing(*args, **kwargs):
        raise FileNotFoundError("nvidia-smi")

    monkeypatch.setattr(subprocess, "run", missing)
    assert gpu._nvidia_smi("uuid") == [] and gpu.nvidia_driver_version() is None


def test_bench_records_of_two_cards_of_one_model_compare_with_a_warning(tmp_path):
    """The record's benches on two H200s (same kernels), with the cards their host files name."""
    cards = {"a": (RECORDS / "2026-11-30-h200-hgemm-cold-inputs" / "models-run1.json", "GPU-e487f033"),
             "b": (RECORDS / "2026-11-30-h200-hgemm-pairs-maps" / "models-run1.json", "GPU-e977470a")}
    paths = {}
    for side, (path, card) in cards.items():
        doc = json.loads(path.read_text())
        paths[side] = tmp_path / f"{side}.json"
        paths[side].write_text(json.dumps({**doc, "env": {**doc["env"], "uuid": card}}))
    warnings = [w for w in api.diff(paths["a"], paths["b"]).warnings if w.startswith("different cards")]
    assert warnings == ["different cards: A ran on GPU-e487f033, B on GPU-e977470a; two cards of one model differ by a "
                        "few percent at some sizes"]
    assert not any(w.startswith("different cards") for w in api.diff(paths["a"], paths["a"]).warnings)
    unnamed = tmp_path / "unnamed.json"
    unnamed.write_text(cards["a"][0].read_text())  # a record from before the env named its card
    assert not any(w.startswith("different cards") for w in api.diff(unnamed, paths["b"]).warnings)


@pytest.mark.gpu
def test_the_env_of_a_gpu_result_names_the_card_nvidia_smi_lists():
    env = gpu.device_info()
    listed = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, check=True).stdout
    assert env["uuid"] and env["uuid"].startswith("GPU-") and f"UUID: {env['uuid']})" in listed
