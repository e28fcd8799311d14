"""Run MXNet 1.9.1's own ``example/rnn/large_word_lm/train.py`` on CPU and print its figures.

The reference measurement for our program (``train.py`` here) and for
``benchmarks/bench_examples.py``. Run it with MXNet 1.9.1's interpreter, after
extracting the example and building its Cython sampler::

    git -C MXNET_REPO archive v1.9.1 example/rnn/large_word_lm | tar -x -C /tmp/mx
    cd /tmp/mx/example/rnn/large_word_lm && pip install cython \\
        && python setup.py build_ext --inplace
    MXNET_MKLDNN_ENABLED=0 OMP_NUM_THREADS=1 python run_mxnet_example.py \\
        /tmp/mx/example/rnn/large_word_lm --data 'CORPUS/train/*' \\
        --test CORPUS/test/test.txt --vocab CORPUS/vocab.txt --emsize 64 --nhid 256 \\
        --num-proj 64 --k 1024 --bptt 20 --batch-size 32 --epochs 1 \\
        --checkpoint-dir /tmp/mx/ckp

The example's ``train.py`` runs unchanged (``runpy``), with three things set around it:
``mx.gpu`` returns ``mx.cpu`` contexts (the example only knows GPUs); its
``mx.callback.Speedometer`` also counts the batches and notes when it was made (just
before the training loop); and ``Module.save_checkpoint`` first waits for MXNet's
engine (``waitall``) and notes the time (the end of the training loop), and
``run_utils.evaluate`` keeps the held-out cross entropy it returns. The last line of
stdout is JSON: ``words`` (batches x batch size x bptt, as the Speedometer counts),
``train_seconds``, ``words_per_second`` and ``test_ppl`` (one per epoch). With more
than one epoch the seconds include the evaluations between epochs.

``MXNET_MKLDNN_ENABLED=0`` is needed on MXNet's CPU build: its MKLDNN
FullyConnected refuses the example's ``(N, 1)`` decoder bias in the full-softmax
evaluation ("Unexpected shape for bias").
"""
import json
import math
import os
import runpy
import sys
import time


def main():
    """Patch, run the example's train.py with the remaining arguments, print JSON."""
    example_dir = os.path.abspath(sys.argv[1])
    import mxnet as mx
    mx.gpu = lambda device_id=0: mx.cpu(device_id)
    mx.context.gpu = mx.gpu
    sys.path.insert(0, example_dir)
    import run_utils
    marks = {"batches": 0, "losses": []}

    class Speedometer(mx.callback.Speedometer):
        def __init__(self, batch_size, *args, **kwargs):
            super().__init__(batch_size, *args, **kwargs)
            marks["words_per_batch"] = batch_size
            marks["start"] = time.perf_counter()

        def __call__(self, param):
            marks["batches"] += 1
            return super().__call__(param)

    save = mx.module.Module.save_checkpoint

    def save_checkpoint(self, *args, **kwargs):
        mx.nd.waitall()
        marks["end"] = time.perf_counter()
        return save(self, *args, **kwargs)

    evaluate = run_utils.evaluate

    def evaluate_and_keep(*args, **kwargs):
        loss = evaluate(*args, **kwargs)
        marks["losses"].append(float(loss))
        return loss

    mx.callback.Speedometer = Speedometer
    mx.module.Module.save_checkpoint = save_checkpoint
    run_utils.evaluate = evaluate_and_keep
    sys.argv = [os.path.join(example_dir, "train.py")] + sys.argv[2:]
    runpy.run_path(sys.argv[0], run_name="__main__")
    words = marks["batches"] * marks["words_per_batch"]
    seconds = marks["end"] - marks["start"]
    print(json.dumps({"words": words, "batches": marks["batches"], "train_seconds": seconds,
                      "words_per_second": words / seconds,
                      "test_ppl": [math.exp(x) for x in marks["losses"]]}))


if __name__ == "__main__":
    main()
