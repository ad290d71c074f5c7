import hashlib
from pathlib import Path

import numpy as np
import pytest
from harness_margin_qml import _hamiltonians as hamiltonians
from harness_margin_qml.datasets import ClusterPhases, DigitsBinary, TfimPhases, add_label_noise


@pytest.mark.parametrize("n", [4, 6, 8])
def test_ground_energy_at_zero_coupling_is_minus_n(n):
    # At J1 = J2 = 0, H = Σ Z_j, whose lowest eigenvalue is -n (all qubits in |1>).
    state = hamiltonians.ground_state("cluster", n, 0.0, 0.0, use_cache=False)
    h = hamiltonians.cluster_hamiltonian(n, 0.0, 0.0)
    assert state @ (h @ state) == pytest.approx(-n, abs=1e-10)
    assert abs(state[-1]) == pytest.approx(1.0, abs=1e-10)


@pytest.mark.parametrize(("j1", "j2"), [(0.3, 2.5), (-1.7, 0.4), (2.2, -1.1), (0.1, 0.2)])
def test_eigsh_agrees_with_dense_eigh_at_8_qubits(j1, j2):
    h = hamiltonians.cluster_hamiltonian(8, j1, j2)
    vals, vecs = np.linalg.eigh(h.toarray())
    state = hamiltonians.ground_state("cluster", 8, j1, j2, use_cache=False)
    assert state @ (h @ state) == pytest.approx(vals[0], abs=1e-9)
    # Non-degenerate points: the states agree up to sign, which the sign fix removes.
    assert abs(state @ vecs[:, 0]) == pytest.approx(1.0, abs=1e-8)
    assert state[np.argmax(np.abs(state))] > 0


@pytest.mark.parametrize(
    ("j1", "j2", "phase"),
    # Papers file §2 table: 0 SPT, 1 FM (large +J1), 2 AFM (large -J1), 3 trivial.
    [(0.0, 0.0, 3), (3.0, 0.0, 1), (-3.0, 0.0, 2), (0.0, 3.0, 0), (0.0, -3.0, 0)],
)
def test_phase_labels_match_phase_diagram(j1, j2, phase):
    assert hamiltonians.cluster_phase(j1, j2) == phase


def test_rejection_sampling_balances_four_phases():
    params = ClusterPhases.Params(n_qubits=4, n_train=400, n_test=2)
    data = ClusterPhases(params).load(params, 3)
    share = np.bincount(data.y_train_clean, minlength=4) / 400
    # Expected 0.25 each; binomial sd at n = 400 is 0.022, so ±0.08 is > 3.5 sd.
    assert np.all(np.abs(share - 0.25) < 0.08)
    labels = [hamiltonians.cluster_phase(a, b) for a, b in data.couplings_train]
    assert labels == data.y_train_clean.tolist()


def test_two_class_version_is_spt_vs_rest_and_balanced():
    params = ClusterPhases.Params(n_qubits=4, n_train=400, n_test=2, n_classes=2)
    data = ClusterPhases(params).load(params, 1)
    phases = np.array([hamiltonians.cluster_phase(a, b) for a, b in data.couplings_train])
    assert np.array_equal(data.y_train_clean, (phases != 0).astype(int))
    assert abs(data.y_train_clean.mean() - 0.5) < 0.08  # sd 0.025


def test_ground_states_are_cached_under_cache_dir_and_reused(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path))
    solved = []
    lowest = hamiltonians._lowest_state
    monkeypatch.setattr(hamiltonians, "_lowest_state", lambda h: solved.append(1) or lowest(h))
    first = hamiltonians.ground_state("cluster", 4, 0.5, -0.25)
    folder = tmp_path / "margin-qml" / hamiltonians.code_digest()
    assert len(list(folder.rglob("output.pkl"))) == 1  # one joblib entry per point
    again = hamiltonians.ground_state("cluster", 4, 0.5, -0.25)
    assert solved == [1] and np.array_equal(again, first)  # read back, not solved again
    hamiltonians.ground_state("cluster", 4, 0.5, -0.125)  # another point is another entry
    assert solved == [1, 1] and len(list(folder.rglob("output.pkl"))) == 2
    # Other code (an edited Hamiltonian) does not read what this code cached
    monkeypatch.setattr(hamiltonians, "code_digest", lambda: "edited")
    assert np.allclose(hamiltonians.ground_state("cluster", 4, 0.5, -0.25), first)
    assert solved == [1, 1, 1]


def test_the_cache_key_follows_the_module_source(tmp_path, monkeypatch):
    source = Path(hamiltonians.__file__).read_bytes()
    edited = tmp_path / "hamiltonians.py"
    edited.write_bytes(source + b"\n# an edit\n")
    monkeypatch.setattr(hamiltonians, "__file__", str(edited))
    hamiltonians.code_digest.cache_clear()
    try:
        assert hamiltonians.code_digest() == hashlib.sha256(edited.read_bytes()).hexdigest()[:12]
        assert hamiltonians.code_digest() != hashlib.sha256(source).hexdigest()[:12]
    finally:
        monkeypatch.undo()
        hamiltonians.code_digest.cache_clear()


def test_test_split_is_shared_across_seeds_and_train_is_not():
    params = ClusterPhases.Params(n_qubits=4, n_train=6, n_test=6)
    a, b = ClusterPhases(params).load(params, 0), ClusterPhases(params).load(params, 1)
    assert np.array_equal(a.x_test, b.x_test)
    assert not np.array_equal(a.x_train, b.x_train)


def test_label_noise_redraws_floor_r_n_labels():
    y = np.zeros(1000, dtype=np.int64)
    noisy = add_label_noise(y, 0.5, 4, np.random.default_rng(0))
    changed = (noisy != y).mean()
    # 500 redrawn, 3/4 of them land on another class: 0.375, sd ~0.015.
    assert changed == pytest.approx(0.375, abs=0.05)
    assert np.array_equal(add_label_noise(y, 0.0, 4, np.random.default_rng(0)), y)


@pytest.mark.parametrize("cls", [ClusterPhases, TfimPhases, DigitsBinary])
@pytest.mark.parametrize(
    ("field", "value"), [("noise", 1.5), ("noise", -0.1), ("n_qubits", 3), ("n_qubits", 2)]
)
def test_bad_params_raise_naming_the_parameter(cls, field, value):
    with pytest.raises(ValueError, match=field):
        cls.Params(**{field: value})


def test_tfim_labels_follow_sign_of_j_and_degenerate_states_are_deterministic():
    params = TfimPhases.Params(n_qubits=6, n_train=20, n_test=4)
    data = TfimPhases(params).load(params, 0)
    assert np.array_equal(data.y_train_clean, (data.couplings_train[:, 0] < 0).astype(int))
    assert np.all(np.abs(data.couplings_train[:, 0]) >= 0.1)
    # g = 0: FM ground space spanned by |0..0>, |1..1>; the fix picks the symmetric cat.
    cat = hamiltonians.ground_state("tfim", 6, 1.0, 0.0, use_cache=False)
    assert cat[0] == pytest.approx(2**-0.5) and cat[-1] == pytest.approx(2**-0.5)


def test_digits_features_are_pca_of_train_scaled_to_0_pi():
    params = DigitsBinary.Params(n_qubits=8, n_train=100, n_test=50)
    data = DigitsBinary(params).load(params, 0)
    assert data.x_train.shape == (100, 8) and data.x_test.shape == (50, 8)
    assert data.x_train.min() == pytest.approx(0.0) and data.x_train.max() == pytest.approx(np.pi)
    assert set(np.unique(data.y_train)) == {0, 1}
    with pytest.raises(ValueError, match="n_train"):
        DigitsBinary.Params(n_train=300, n_test=100)
