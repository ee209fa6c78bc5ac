"""mx.viz: print_summary reproduces MXNet's table; plot_network gives DOT."""
import mxlite as mx

# Printed by MXNet 1.9.1's mx.viz.print_summary for the network below.
MXNET_SUMMARY = '________________________________________________________________________________________________________________________\nLayer (type)                                        Output Shape            Param #     Previous Layer                  \n========================================================================================================================\ndata(null)                                          3x8x8                   0                                           \n________________________________________________________________________________________________________________________\nconv1(Convolution)                                  8x6x6                   224         data                            \n________________________________________________________________________________________________________________________\nbn1(BatchNorm)                                      8x6x6                   16          conv1                           \n________________________________________________________________________________________________________________________\nrelu1(Activation)                                   8x6x6                   0           bn1                             \n________________________________________________________________________________________________________________________\npool1(Pooling)                                      8x3x3                   0           relu1                           \n________________________________________________________________________________________________________________________\nflat(Flatten)                                       72                      0           pool1                           \n________________________________________________________________________________________________________________________\nfc1(FullyConnected)                                 10                      730         flat                            \n________________________________________________________________________________________________________________________\nsoftmax(SoftmaxOutput)                              10                      0           fc1                             \n========================================================================================================================\nTotal params: 970\n________________________________________________________________________________________________________________________\n'


def _net():
    data = mx.sym.var("data")
    c = mx.sym.Convolution(data, kernel=(3, 3), num_filter=8, name="conv1")
    b = mx.sym.BatchNorm(c, name="bn1")
    a = mx.sym.Activation(b, act_type="relu", name="relu1")
    p = mx.sym.Pooling(a, kernel=(2, 2), stride=(2, 2), pool_type="max", name="pool1")
    f = mx.sym.flatten(p, name="flat")
    fc = mx.sym.FullyConnected(f, num_hidden=10, name="fc1")
    return mx.sym.SoftmaxOutput(fc, name="softmax")


def test_print_summary_matches_mxnet(capsys):
    mx.viz.print_summary(_net(), shape={"data": (1, 3, 8, 8)})
    assert capsys.readouterr().out == MXNET_SUMMARY


def test_plot_network_dot():
    g = mx.viz.plot_network(_net(), shape={"data": (1, 3, 8, 8)})
    src = g.source
    assert src.startswith("digraph")
    assert "Convolution" in src and "fc1_weight" not in src
    assert '-> n' in src and '"8x6x6"' in src
