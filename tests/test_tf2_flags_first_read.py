"""A flag read at module level before `app.run`: TF 1.x's FLAGS parsed the command line there.

`tf.app.flags.FLAGS` was TensorFlow's wrapper of absl's flags: its first read parsed `sys.argv` when nothing
had (`_FlagValuesWrapper.__getattr__`). The TF2 tier writes absl's flags, which raise
`UnparsedFlagAccessError` until `app.run` or a call parses them, so a script reading a flag while it
builds its graph (`W = tf.Variable(... * FLAGS.scale)`, or a helper `data_type()` reading
`FLAGS.use_fp16`) crashed when migrated. The output now parses the flags before the first module-level
statement that reads one, directly or through the script's functions, as TF 1.x did; a script that
reads them only under `app.run(main)` is left as it was. Each variant is run with a flag given on the
command line, and prints what TF 1.x printed.
"""
import pytest

from conftest import run_python, run_tf1clip, sampled, tier_output

TEXT = '''import numpy as np
import tensorflow as tf
{head}
tf.app.flags.DEFINE_float("scale", 1.0, "the start weights' scale")
{flags}

def scale():
    return {read}

{body}
'''
BODY = '''x = tf.placeholder(tf.float32, [None, 2])
W = tf.Variable(tf.ones([2, 1]) * {value})
loss = tf.reduce_mean(tf.square(tf.matmul(x, W) - 1.0))
train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for i in range(2):
        _, l = sess.run([train_op, loss], {{x: np.ones((3, 2), np.float32)}})
        print("step", i, round(float(l), 5))
'''
MAIN = "\n\ndef main(_):\n" + "".join("    " + line + "\n" if line else "\n" for line in BODY.splitlines()) + \
    "\n\nif __name__ == '__main__':\n    tf.app.run()\n"
VARIANTS = {  # variant: (head, flags binding, the read in `scale`, the body)
    "read_by_a_statement": ("", "FLAGS = tf.app.flags.FLAGS", "FLAGS.scale", BODY.format(value="FLAGS.scale")),
    "read_through_a_function": ("", "FLAGS = tf.app.flags.FLAGS", "FLAGS.scale", BODY.format(value="scale()")),
    "through_tf_flags_unbound": ("", "", "tf.flags.FLAGS.scale", BODY.format(value="scale()")),
    "through_an_alias": ("from tensorflow import flags as F\n", "", "F.FLAGS.scale", BODY.format(value="scale()")),
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_a_flag_read_before_app_run_is_parsed_there_as_tf1_did(variant, tmp_path):
    head, binding, read, body = VARIANTS[variant]
    text = TEXT.format(head=head, flags=binding, read=read, body=body)
    out = tier_output(text)
    assert out.count(".FLAGS(sys.argv)") == 1 and "import sys" in out, out
    assert out.index(".FLAGS(sys.argv)") < out.index("tf.Variable("), out
    if variant in sampled(VARIANTS, ("read_through_a_function",)):
        (tmp_path / "old.py").write_text(text)
        (tmp_path / "new.py").write_text(out)
        old = run_tf1clip("run", tmp_path / "old.py", "--scale=0.25", cwd=tmp_path)
        new = run_python(tmp_path / "new.py", "--scale=0.25", cwd=tmp_path)
        assert old.returncode == 0 and new.returncode == 0, old.stderr[-2000:] + new.stderr[-2000:]
        printed = old.stdout.strip().splitlines()
        assert len(printed) == 2 and new.stdout.strip().splitlines() == printed
        # the flag's value was read: 0.25 gives another first loss than the default 1.0 (1.0 * 2 - 1 = 1)
        assert printed[0] != "step 0 1.0"


def test_flags_read_only_under_app_run_are_left_to_it():
    text = TEXT.format(head="", flags="FLAGS = tf.app.flags.FLAGS", read="FLAGS.scale",
                       body=MAIN.format(value="scale()"))
    out = tier_output(text)
    assert "app.run(main)" in out and "sys.argv" not in out, out
