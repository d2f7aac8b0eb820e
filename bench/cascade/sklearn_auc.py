#!/usr/bin/python3
"""Cross-check of amq's logistic-regression scorer against scikit-learn.

    build/amq-lab cascade eval --data DIR --dump SPLIT [--only hosts,words,kv]
    /usr/bin/python3 bench/cascade/sklearn_auc.py build/amq SPLIT

For each dataset the eval wrote its model's training keys (train_m,
train_n), the held-out test keys (test_m, test_n) and amq's AUC on them.
This script turns every key into amq's own feature vector (`amq cascade
features`, svmlight format), fits scikit-learn's LogisticRegression on the
same training vectors (L2, class weights balanced, lbfgs), computes its AUC
on the same test vectors, and prints both. Exit status 1 if any dataset's
AUCs differ by more than 0.01.

Needs Debian's python3-sklearn (not a dependency of amq itself).
"""
import glob
import io
import os
import subprocess
import sys

import numpy as np
from sklearn.datasets import load_svmlight_file
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score


def features(amq, path, label, dim_bits):
    out = subprocess.run(
        [amq, "cascade", "features", "--dim-bits", str(dim_bits),
         "--label", str(label), path],
        check=True, capture_output=True).stdout
    x, y = load_svmlight_file(io.BytesIO(out), n_features=1 << dim_bits,
                              zero_based=False)
    return x, y


def main():
    amq, split = sys.argv[1], sys.argv[2]
    worst = 0.0
    print("| dataset | amq AUC | scikit-learn AUC | difference |")
    print("|---|---:|---:|---:|")
    for auc_file in sorted(glob.glob(os.path.join(split, "*.auc"))):
        name = os.path.basename(auc_file)[:-4]
        ours, dim_bits = open(auc_file).read().split()
        ours, dim_bits = float(ours), int(dim_bits)
        part = lambda p: os.path.join(split, f"{name}.{p}.txt")
        xs, ys = zip(*(features(amq, part(p), l, dim_bits) for p, l in
                       (("train_m", 1), ("train_n", 0))))
        xt, yt = zip(*(features(amq, part(p), l, dim_bits) for p, l in
                       (("test_m", 1), ("test_n", 0))))
        from scipy.sparse import vstack
        clf = LogisticRegression(C=1.0, class_weight="balanced",
                                 max_iter=1000)
        clf.fit(vstack(xs), np.concatenate(ys))
        theirs = roc_auc_score(np.concatenate(yt),
                               clf.decision_function(vstack(xt)))
        worst = max(worst, abs(theirs - ours))
        print(f"| {name} | {ours:.4f} | {theirs:.4f} | {ours - theirs:+.4f} |")
    sys.exit(1 if worst > 0.01 else 0)


if __name__ == "__main__":
    main()
