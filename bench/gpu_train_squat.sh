#!/usr/bin/env bash
# The GPU check of the MuJoCo Warp engine, as one script: on a machine with an NVIDIA GPU, from the repository root,
#
#     bash bench/gpu_train_squat.sh [OUT] [MINUTES]
#
# 1. installs the project with a CUDA torch build and MuJoCo Warp into .venv-gpu (skipped when present);
# 2. env steps/s per engine and device (bench/bench_engine_speed.py: the C engine on every CPU core against Warp on
#    the GPU, 256 to 4096 environments);
# 3. retargets the bundled squat and trains it as docs/asap_loop.md's CPU recipe does (drift limit from 0.5 m), but
#    with `--engine warp --device cuda` and 4096 environments, for at most MINUTES (default 8) of wall time;
# 4. evaluates the policy on the C engine (eval-policy --episodes 8 --domain-rand: success, Eg-mpjpe); prints the
#    training's wall time.
# Everything it prints also goes to OUT/log.txt (default: gpu_check/).
set -euo pipefail
OUT=${1:-gpu_check}
MINUTES=${2:-8}
mkdir -p "$OUT"
exec > >(tee "$OUT/log.txt") 2>&1
if [ ! -x .venv-gpu/bin/asap-retarget ]; then
  python3 -m venv .venv-gpu
  .venv-gpu/bin/pip install -q torch==2.13.0 --index-url https://download.pytorch.org/whl/cu128
  .venv-gpu/bin/pip install -q -e '.[train,warp]'
fi
. .venv-gpu/bin/activate
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
SQUAT="$OUT/squat.pkl"
asap-retarget retarget motions_raw/video_squat_level1_filter_amass.npz -o "$SQUAT"
python bench/bench_engine_speed.py --envs 256,1024,4096 --steps 25 --repeats 3 --threads 0 --devices cuda
start=$(date +%s)
asap-retarget train track --motion "$SQUAT" -o "$OUT/squat_run" --engine warp --device cuda --num-envs 4096 \
  --termination-init-m 0.5 --iterations 100000 --max-minutes "$MINUTES"
end=$(date +%s)
echo "training wall time: $((end - start)) s"
asap-retarget eval-policy --policy "$OUT/squat_run" --motion "$SQUAT" --episodes 8 --domain-rand
