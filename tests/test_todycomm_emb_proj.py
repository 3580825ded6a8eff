"""TodyComm's `emb_proj` option (issue 28): a shared learned projection of the analysis embeddings
between the normaliser and the GRU. By default (null) on for embeddings wider than 64 dims (MiniLM) and off
for narrower ones (hashing), whose default network must stay as it was."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from test_todycomm import ANSWERS, _episode, _method, _one_thread  # noqa: F401 (autouse fixture)

from tomacs.methods.features import feature_names
from tomacs.methods.nets import CreditNet
from tomacs.methods.todycomm import AUTO_PROJ, resolve_emb_proj


def test_projection_feeds_the_gru_by_hand() -> None:
    # 6 inputs; columns (1, 2) and (4, 5) are two 2-d embedding vectors, 0 and 3 the other features
    torch.manual_seed(0)
    net = CreditNet(6, hidden=3, mlp_hidden=2, normalize="none", emb_cols=[[1, 2], [4, 5]], emb_proj=1)
    assert net.gru.input_size == 2 + 2 * 1
    with torch.no_grad():
        net.proj.weight.copy_(torch.tensor([[2.0, -1.0]]))
    f = torch.tensor([[10.0, 1.0, 3.0, 20.0, 5.0, 4.0]])
    h = torch.zeros(1, 3)
    logit, h_new = net(f, h)
    # by hand: rest = (10, 20); own vector 2*1 - 3 = -1; neighbours' 2*5 - 4 = 6
    expected_in = torch.tensor([[10.0, 20.0, -1.0, 6.0]])
    h_ref = net.gru(expected_in, h)
    assert torch.allclose(h_new, h_ref)
    assert torch.allclose(logit, net.mlp(h_ref).squeeze(-1))


def test_default_network_is_unchanged_and_projection_trains() -> None:
    plain = _method()
    assert plain.meta["emb_proj"] == 0
    assert sorted(k for k, _ in plain.net.named_parameters()) == sorted(
        ["gru.weight_ih", "gru.weight_hh", "gru.bias_ih", "gru.bias_hh", "mlp.0.weight", "mlp.0.bias"]
        + ["mlp.2.weight", "mlp.2.bias"]
    )
    assert plain.net.gru.input_size == plain.in_dim
    # the seeded initial weights of the default network do not depend on the option existing
    torch.manual_seed(plain.ctx.seed)
    ref = CreditNet(plain.in_dim, plain.hidden, plain.mlp_hidden, plain.normalize, 5.0)
    for k, v in ref.state_dict().items():
        assert torch.equal(v, plain.net.state_dict()[k]), k

    m = _method(emb_proj=4)
    names = dict(feature_names(m.emb_dim, m.features))
    assert m.net.emb_idx.tolist() == [
        list(range(names["ana"].start, names["ana"].stop)),
        list(range(names["nbr_ana"].start, names["nbr_ana"].stop)),
    ]
    assert m.net.gru.input_size == m.in_dim - 2 * m.emb_dim + 2 * 4
    state, _, _ = _episode(m, ANSWERS * 3, train=True, seed=5)
    m.loss(state, [], [1.0, 0.0, 1.0] * 3).backward()
    assert m.net.proj.weight.grad is not None and float(m.net.proj.weight.grad.abs().sum()) > 0
    # a checkpoint records the setting; another setting names the key to change
    with pytest.raises(ValueError, match="emb_proj"):
        plain.load_state_dict(m.state_dict())
    old = plain.state_dict()
    del old["meta"]["emb_proj"]  # written before the option existed: no projection
    _method().load_state_dict(old)
    with pytest.raises(ValueError, match="emb_proj"):
        m.load_state_dict(old)


@pytest.mark.parametrize("bad", [-1, 2.5, True])
def test_bad_emb_proj_is_a_clear_error(bad: object) -> None:
    with pytest.raises(ValueError, match="emb_proj must be an integer >= 0"):
        _method(emb_proj=bad)


def test_self_only_features_project_their_one_embedding() -> None:
    m = _method(emb_proj=3, features="self_only")
    assert m.net.emb_idx.shape == (1, m.emb_dim)
    state, _, _ = _episode(m, ANSWERS, train=False)
    assert np.isfinite(state["credits"][m.ctx.rounds + 1]).all()


def test_default_projection_follows_the_embedding_width() -> None:
    assert resolve_emb_proj(None, 384) == AUTO_PROJ == 32  # MiniLM
    assert resolve_emb_proj(None, 65) == 32
    assert resolve_emb_proj(None, 64) == 0  # hashing
    assert resolve_emb_proj(0, 384) == 0 and resolve_emb_proj(8, 16) == 8  # an explicit setting wins
    wide = _method(emb_dim=384)
    assert wide.settings.emb_proj is None and wide.meta["emb_proj"] == 32
    assert wide.net.gru.input_size == wide.in_dim - 2 * 384 + 2 * 32
    unprojected = _method(emb_dim=384, emb_proj=0)
    assert unprojected.meta["emb_proj"] == 0 and not hasattr(unprojected.net, "proj")
    # a MiniLM checkpoint of the earlier default (no projection) is refused, naming the key to set
    with pytest.raises(ValueError, match="emb_proj"):
        wide.load_state_dict(unprojected.state_dict())
