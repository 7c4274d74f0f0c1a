"""tf.contrib.seq2seq as TF 1.15 had it, on TF 2.21 graph mode.

Provided: `sequence_loss`; the decoding loop (`Decoder`, `BasicDecoder`, `BasicDecoderOutput`,
`dynamic_decode`); the helpers (`TrainingHelper`, `GreedyEmbeddingHelper`,
`SampleEmbeddingHelper`, `InferenceHelper`, `CustomHelper`); attention (`LuongAttention`,
`BahdanauAttention`, `AttentionWrapper`, `AttentionWrapperState`, `hardmax`); beam search
(`BeamSearchDecoder`, its state and output tuples, `gather_tree`, `tile_batch`).
Each with TF 1.15's math and variable names (tests/test_contrib_seq2seq.py checks the numbers).
Anything else fails with one line naming a replacement.
"""
from tf1clip.contrib import forward
from tf1clip.contrib.seq2seq.attention_wrapper import (AttentionMechanism, AttentionWrapperState,
                                                       BahdanauAttention, LuongAttention, hardmax)
from tf1clip.contrib.seq2seq.beam_search import (BeamSearchDecoder, BeamSearchDecoderOutput, BeamSearchDecoderState,
                                                  FinalBeamSearchDecoderOutput, gather_tree, tile_batch)
from tf1clip.contrib.seq2seq.decoder import BasicDecoder, BasicDecoderOutput, Decoder, dynamic_decode
from tf1clip.contrib.seq2seq.helper import (CustomHelper, GreedyEmbeddingHelper, Helper, InferenceHelper,
                                            SampleEmbeddingHelper, TrainingHelper)
from tf1clip.contrib.seq2seq.loss import sequence_loss

__all__ = ["AttentionMechanism", "AttentionWrapper", "AttentionWrapperState", "BahdanauAttention",
           "BeamSearchDecoder", "BeamSearchDecoderOutput", "BeamSearchDecoderState", "FinalBeamSearchDecoderOutput",
           "gather_tree", "BasicDecoder", "BasicDecoderOutput", "CustomHelper", "Decoder", "GreedyEmbeddingHelper", "Helper",
           "InferenceHelper", "LuongAttention", "SampleEmbeddingHelper", "TrainingHelper", "dynamic_decode",
           "hardmax", "sequence_loss", "tile_batch"]

_forward = forward(__name__, "tf.contrib.seq2seq")  # hints: tf1clip.contrib.hints


def __getattr__(name):
    if name == "AttentionWrapper":  # on tf-keras' legacy RNNCell: built once TensorFlow is set up
        from tf1clip.contrib.seq2seq.attention_wrapper import attention_wrapper_class

        globals()[name] = attention_wrapper_class()
        return globals()[name]
    return _forward(name)
