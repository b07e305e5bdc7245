#!/usr/bin/env bash
# A Slurm job array: four tasks, each sweeping its shard of the registry on a node of its own; the
# script's arguments are added to the sweep's (a selection, a device, options).
#   sbatch --wait docs/recipes/slurm-array.sh && python opperf.py merge parts/part-*.json --output-file whole.json
# --shard auto reads SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT; --costs balances the shards by
# what each operator cost the previous night's sweep (leave it out the first time).
#SBATCH --job-name=opperf
#SBATCH --array=0-3
#SBATCH --cpus-per-task=2
#SBATCH --output=opperf-%A_%a.log
set -euo pipefail
mkdir -p parts
COSTS=()
if [ -f previous.json ]; then COSTS=(--costs previous.json); fi
python opperf.py sweep --shard auto "${COSTS[@]}" "$@" --quiet --output-file "parts/part-${SLURM_ARRAY_TASK_ID}.json"
