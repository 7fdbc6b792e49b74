#!/usr/bin/python3
"""Makes tests/data/data/classification_metrics_reference.json: run_glue's metrics on seeded random predictions, as
scikit-learn and SciPy compute them (the libraries behind Hugging Face's `glue` metric): accuracy, binary F1,
Matthews correlation (2 to 5 classes), Pearson and Spearman (with ties, and a constant input giving NaN, written
as null). Used only to make the fixture; Debian 12's python3-sklearn 1.2.1 and python3-scipy 1.10.1:

  apt-get install -y python3-sklearn python3-scipy
  /usr/bin/python3 scripts/make_classification_metrics_reference.py
"""
import json
import math
import os

import numpy as np
from scipy.stats import pearsonr, spearmanr
from sklearn.metrics import accuracy_score, f1_score, matthews_corrcoef

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, 'tests/data/data/classification_metrics_reference.json')


def class_case(rng, n, classes, agreement):
    labels = rng.integers(0, classes, n)
    predictions = np.where(rng.random(n) < agreement, labels, rng.integers(0, classes, n))
    case = {'predictions': predictions.tolist(), 'labels': labels.tolist(),
            'accuracy': float(accuracy_score(labels, predictions)),
            'matthews_correlation': float(matthews_corrcoef(labels, predictions))}
    if classes == 2:
        case['f1'] = float(f1_score(labels, predictions, zero_division=0))
    return case


def regression_case(rng, n, step):
    targets = rng.random(n) * 5
    scores = targets + rng.normal(0, 1, n)
    if step:  # ties, as STS-B's 0.2-step gold scores have them
        targets = np.round(targets / step) * step
        scores = np.round(scores / step) * step
    p = pearsonr(scores, targets)[0]
    s = spearmanr(scores, targets)[0]
    return {'scores': scores.tolist(), 'targets': targets.tolist(), 'pearson': float(p), 'spearmanr': float(s)}


def main():
    rng = np.random.default_rng(20261203)
    cases = []
    for n, classes, agreement in [(10, 2, 0.7), (57, 2, 0.5), (408, 2, 0.85), (1043, 2, 0.8), (300, 3, 0.6),
                                  (97, 5, 0.3), (50, 2, 0.0), (64, 3, 1.0)]:
        cases.append(class_case(rng, n, classes, agreement))
    # Edge cases: no predicted positive (F1 0), one class predicted only (Matthews 0), all right.
    labels = [0, 1, 1, 0, 1, 0, 0, 1]
    for predictions in ([0] * 8, [1] * 8, labels):
        cases.append({'predictions': predictions, 'labels': labels,
                      'accuracy': float(accuracy_score(labels, predictions)),
                      'matthews_correlation': float(matthews_corrcoef(labels, predictions)),
                      'f1': float(f1_score(labels, predictions, zero_division=0))})
    regressions = [regression_case(rng, n, step) for n, step in [(10, 0), (200, 0), (1500, 0.2), (40, 1.0)]]
    with np.errstate(all='ignore'):
        import warnings
        warnings.simplefilter('ignore')
        constant = {'scores': [2.0] * 6, 'targets': [0.5, 1.0, 1.5, 2.0, 2.5, 3.0]}
        constant['pearson'] = float(pearsonr(constant['scores'], constant['targets'])[0])
        constant['spearmanr'] = float(spearmanr(constant['scores'], constant['targets'])[0])
    regressions.append(constant)
    nan_to_null = lambda v: None if isinstance(v, float) and math.isnan(v) else v
    regressions = [{k: nan_to_null(v) for k, v in r.items()} for r in regressions]
    with open(OUT, 'w') as f:
        json.dump({'classification': cases, 'regression': regressions}, f)
        f.write('\n')
    print(f'wrote {OUT}: {len(cases)} classification and {len(regressions)} regression cases')


if __name__ == '__main__':
    main()
