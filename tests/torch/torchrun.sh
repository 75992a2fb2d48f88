#!/usr/bin/env bash
# torch_gcoll.run (torchrun without libuv) launches the DDP example on gcoll,
# with the package imported from the build prefix.
set -u
export PYTHONPATH=/build/prefix/lib/python3/dist-packages GLOO_SOCKET_IFNAME=lo OMP_NUM_THREADS=1
echo "TAP version 13"
echo "1..2"
python3 -c 'import torch_gcoll, torch.distributed as d; assert "gcoll" in d.Backend.backend_list; print("# imported", torch_gcoll.__file__)' &&
	echo "ok 1 - import torch_gcoll from the build prefix registers backend gcoll" ||
	echo "not ok 1 - import torch_gcoll from the build prefix"
out=$(timeout 90 python3 -m torch_gcoll.run --nproc-per-node 2 --master-port "$(python3 -c "import socket; s=socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")" \
	collectives/bindings/torch/examples/ddp_train.py --backend gcoll --steps 5 2>&1)
rc=$?
echo "$out" | grep -E '^backend' | sed 's/^/# /'
if [ $rc = 0 ] && echo "$out" | grep -qE '^backend gcoll over [a-z_;]+ ranks 2 steps 5 loss'; then
	echo "ok 2 - python3 -m torch_gcoll.run --nproc-per-node 2 ddp_train.py --backend gcoll"
else
	echo "$out" | tail -15 | sed 's/^/# /'
	echo "not ok 2 - torch_gcoll.run ddp_train.py (status $rc)"
fi
