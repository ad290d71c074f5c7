"""Wall time of the paper suite's group cells at 10 qubits (README "Suites").

Trains the three group cells of one (noise level, seed) of ``suites/paper/margin-qml-paper.yaml``
(cluster phases, 10 qubits, 20 train / 1,000 test; L in {1, 3, 5, 7, 9}, Adam lr 1e-3,
<= 5,000 steps, window 300) with the suite's methods and prints, per group, the wall time
and the number of steps each model ran. The same cell through the harness:
``harness run suites/paper/margin-qml-paper.yaml --dataset 'cluster-phases[noise=0.0]'
--method 'qcnn-group[shared=false]' --seeds 0 -j 1``.

Run: ``python plugins/margin-qml/benchmarks/paper_group_time.py [noise] [seed]``
(about 20 minutes on the shared 2-core machine; not collected by pytest).
"""

import json
import sys
import time


def main(noise: float = 0.0, seed: int = 0) -> None:
    from harness_margin_qml.datasets import ClusterPhases
    from harness_margin_qml.methods import QCNNGroupMethod, StronglyEntanglingGroupMethod

    start = time.time()
    params = ClusterPhases.Params(n_qubits=10, n_train=20, n_test=1000, n_classes=4, noise=noise)
    data = ClusterPhases().load(params, seed)
    print(json.dumps({"data_s": round(time.time() - start, 1)}), flush=True)
    common = {"layers": [1, 3, 5, 7, 9], "lr": 0.001, "max_steps": 5000, "window": 300}
    groups = [
        ("qcnn-unshared", QCNNGroupMethod(), QCNNGroupMethod.Params(shared=False, **common)),
        ("sel", StronglyEntanglingGroupMethod(), StronglyEntanglingGroupMethod.Params(**common)),
        ("qcnn-shared", QCNNGroupMethod(), QCNNGroupMethod.Params(shared=True, **common)),
    ]
    for name, method, method_params in groups:
        start = time.time()
        out = method.run(data, method_params, seed)
        steps = {k: len(m.loss) for k, m in zip(out.keys, out.members, strict=True)}
        wall = round(time.time() - start, 1)
        print(json.dumps({"group": name, "noise": noise, "wall_s": wall, "steps": steps}))


if __name__ == "__main__":
    main(*(float(a) if i == 0 else int(a) for i, a in enumerate(sys.argv[1:3])))
