"""`LSTMStateTuple`: the (c, h) pair TF 1.x's LSTM cells return, read as `state.c` / `state.h`.

TF 2.21 has no `tf.nn.rnn_cell.LSTMStateTuple`; the twins use this namedtuple (a nest structure
for tf.function and tf.while_loop alike).
"""

CLASS = "LSTMStateTuple"
NEEDS: tuple = ()
TF1: tuple = ("tensorflow.nn.rnn_cell.LSTMStateTuple", "tensorflow.contrib.rnn.LSTMStateTuple")
SOURCE = '''\
LSTMStateTuple = collections.namedtuple("LSTMStateTuple", ("c", "h"))
'''
IMPORTS = ("collections",)
