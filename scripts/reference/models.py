"""The real models the reference covers: torchvision's (weights not needed: shapes only) and hand-written
transformers, a U-Net and 1-D audio networks written as their papers / common code bases do.

Each entry: name -> (family, builder, inputs, input names, loss class axis: 1 = channels [N, C, ...],
-1 = last axis of token logits).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision.models as tvm
import torchvision.models.segmentation as seg
import torchvision.models.video as video


class SegmentationOut(nn.Module):
    """torchvision's segmentation models return {'out': ...}; the export needs a tensor."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


# ---------------------------------------------------------------------------------------------- BERT
class BertStyle(nn.Module):
    """A BERT-style encoder: token, position (computed ids) and segment embeddings, post-norm
    nn.TransformerEncoderLayer (packed q/k/v projection of nn.MultiheadAttention, GELU, dropout 0.1), MLM head."""

    def __init__(self, vocab=8192, d=256, layers=4, heads=4, ff=1024, max_len=512):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(max_len, d)
        self.seg = nn.Embedding(2, d)
        self.norm = nn.LayerNorm(d)
        self.drop = nn.Dropout(0.1)
        layer = nn.TransformerEncoderLayer(d, heads, ff, dropout=0.1, activation="gelu", batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(d, vocab)

    def forward(self, ids):
        positions = torch.arange(ids.shape[1]).unsqueeze(0)
        x = self.tok(ids) + self.pos(positions) + self.seg(torch.zeros_like(ids))
        return self.head(self.encoder(self.drop(self.norm(x))))


# --------------------------------------------------------------------------------------------- LLaMA
class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate_half(x):
    return torch.cat((-x[..., x.shape[-1] // 2:], x[..., : x.shape[-1] // 2]), dim=-1)


class LlamaBlock(nn.Module):
    def __init__(self, d, heads, kv_heads, ff):
        super().__init__()
        self.heads, self.kv_heads, self.hd = heads, kv_heads, d // heads
        self.attn_norm = RMSNorm(d)
        self.wq = nn.Linear(d, heads * self.hd, bias=False)
        self.wk = nn.Linear(d, kv_heads * self.hd, bias=False)
        self.wv = nn.Linear(d, kv_heads * self.hd, bias=False)
        self.wo = nn.Linear(heads * self.hd, d, bias=False)
        self.ffn_norm = RMSNorm(d)
        self.w1 = nn.Linear(d, ff, bias=False)
        self.w3 = nn.Linear(d, ff, bias=False)
        self.w2 = nn.Linear(ff, d, bias=False)

    def forward(self, x, cos, sin, mask):
        B, T, _ = x.shape
        h = self.attn_norm(x)
        q = self.wq(h).view(B, T, self.heads, self.hd).transpose(1, 2)
        k = self.wk(h).view(B, T, self.kv_heads, self.hd).transpose(1, 2)
        v = self.wv(h).view(B, T, self.kv_heads, self.hd).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin  # rotary position embedding
        k = k * cos + rotate_half(k) * sin
        rep = self.heads // self.kv_heads  # grouped-query attention: each K/V head serves `rep` query heads
        k = k[:, :, None].expand(B, self.kv_heads, rep, T, self.hd).reshape(B, self.heads, T, self.hd)
        v = v[:, :, None].expand(B, self.kv_heads, rep, T, self.hd).reshape(B, self.heads, T, self.hd)
        scores = torch.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(self.hd) + mask
        p = F.softmax(scores, dim=-1)
        o = torch.einsum("bhqk,bhkd->bhqd", p, v).transpose(1, 2).reshape(B, T, -1)
        x = x + self.wo(o)
        h = self.ffn_norm(x)
        return x + self.w2(F.silu(self.w1(h)) * self.w3(h))  # SwiGLU


class LlamaStyle(nn.Module):
    """A LLaMA-style decoder: RMSNorm, rotary embeddings, grouped-query attention written with einsum, causal
    mask, SwiGLU feed-forward, no biases, untied head."""

    def __init__(self, vocab=8192, d=256, layers=4, heads=8, kv_heads=2, ff=688):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.blocks = nn.ModuleList(LlamaBlock(d, heads, kv_heads, ff) for _ in range(layers))
        self.norm = RMSNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.hd = d // heads

    def forward(self, ids):
        T = ids.shape[1]
        # Rotary frequencies computed here rather than kept as a buffer: an ONNX file cannot tell float buffers
        # from parameters, and monet would count a stored table as trainable.
        inv_freq = 1.0 / (10000 ** (torch.arange(0, self.hd, 2).float() / self.hd))
        freqs = torch.outer(torch.arange(T).float(), inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos()[None, None], emb.sin()[None, None]
        mask = torch.full((T, T), float("-inf")).triu(1)
        x = self.emb(ids)
        for block in self.blocks:
            x = block(x, cos, sin, mask)
        return self.head(self.norm(x))


# ------------------------------------------------------------------------------------ encoder-decoder
class Seq2SeqTransformer(nn.Module):
    """An encoder-decoder transformer (nn.Transformer, pre-norm): self- and cross-attention (the packed
    projection split into q and k/v), a causal target mask, a learned positional tensor, shared embeddings."""

    def __init__(self, vocab=8000, d=256, heads=4, layers=2, ff=1024, max_len=128):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.zeros(1, max_len, d))
        self.transformer = nn.Transformer(d, heads, layers, layers, ff, dropout=0.1, batch_first=True,
                                          norm_first=True)
        self.head = nn.Linear(d, vocab)

    def forward(self, src, tgt):
        S, T = src.shape[1], tgt.shape[1]
        mask = torch.full((T, T), float("-inf")).triu(1)
        y = self.transformer(self.emb(src) + self.pos[:, :S], self.emb(tgt) + self.pos[:, :T], tgt_mask=mask)
        return self.head(y)


# ---------------------------------------------------------------------------------------------- U-Net
def double_conv(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
                         nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class UNet(nn.Module):
    """U-Net (Ronneberger et al. 2015, padded convolutions): max-pool down, ConvTranspose2d(2, stride 2) up,
    skip connections by concatenation, a 1x1 classifier."""

    def __init__(self, cin=3, classes=4, base=32, depth=4):
        super().__init__()
        chans = [base * 2**i for i in range(depth + 1)]
        self.down = nn.ModuleList([double_conv(cin, chans[0])] +
                                  [double_conv(chans[i], chans[i + 1]) for i in range(depth)])
        self.up = nn.ModuleList(nn.ConvTranspose2d(chans[i + 1], chans[i], 2, stride=2) for i in reversed(range(depth)))
        self.merge = nn.ModuleList(double_conv(2 * chans[i], chans[i]) for i in reversed(range(depth)))
        self.out = nn.Conv2d(chans[0], classes, 1)

    def forward(self, x):
        skips = []
        for i, block in enumerate(self.down):
            x = block(x if i == 0 else F.max_pool2d(x, 2))
            skips.append(x)
        skips.pop()
        for up, merge in zip(self.up, self.merge):
            x = merge(torch.cat((skips.pop(), up(x)), dim=1))
        return self.out(x)


# ------------------------------------------------------------------------------------------- 1-D audio
class M5(nn.Module):
    """M5 (Dai et al. 2017) as in torchaudio's speech-command tutorial: 1-D convolutions on raw 8 kHz audio."""

    def __init__(self, classes=35, ch=32):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv1d(1, ch, 80, stride=16), nn.BatchNorm1d(ch)
        self.conv2, self.bn2 = nn.Conv1d(ch, ch, 3), nn.BatchNorm1d(ch)
        self.conv3, self.bn3 = nn.Conv1d(ch, 2 * ch, 3), nn.BatchNorm1d(2 * ch)
        self.conv4, self.bn4 = nn.Conv1d(2 * ch, 2 * ch, 3), nn.BatchNorm1d(2 * ch)
        self.fc = nn.Linear(2 * ch, classes)

    def forward(self, x):
        for conv, bn in ((self.conv1, self.bn1), (self.conv2, self.bn2), (self.conv3, self.bn3), (self.conv4, self.bn4)):
            x = F.max_pool1d(F.relu(bn(conv(x))), 4)
        x = F.avg_pool1d(x, int(x.shape[-1])).permute(0, 2, 1)
        return self.fc(x).squeeze(1)


class Wav2VecStyle(nn.Module):
    """A wav2vec 2.0-style audio classifier: the conv feature encoder (GroupNorm on the first layer, GELU),
    a projection, two transformer encoder layers and mean pooling over time."""

    def __init__(self, classes=35, ch=256, d=256, heads=4, layers=2):
        super().__init__()
        kernels, strides = (10, 3, 3, 3, 3, 2, 2), (5, 2, 2, 2, 2, 2, 2)
        convs = []
        for i, (k, s) in enumerate(zip(kernels, strides)):
            convs.append(nn.Conv1d(1 if i == 0 else ch, ch, k, stride=s, bias=False))
            if i == 0:
                convs.append(nn.GroupNorm(ch, ch))
            convs.append(nn.GELU())
        self.features = nn.Sequential(*convs)
        self.norm = nn.LayerNorm(ch)
        self.proj = nn.Linear(ch, d)
        layer = nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.1, activation="gelu", batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.fc = nn.Linear(d, classes)

    def forward(self, x):
        x = self.proj(self.norm(self.features(x).transpose(1, 2)))
        return self.fc(self.encoder(x).mean(dim=1))


def _tv(name, **kw):
    return lambda: getattr(tvm, name)(weights=None, **kw)


def _seg(name, **kw):
    return lambda: SegmentationOut(getattr(seg, name)(weights=None, weights_backbone=None, **kw))


IMAGE = [("input", (1, 3, 224, 224), "float")]
TOKENS = [("tokens", (1, 128), "long")]
MODELS = {
    # CNN classifiers (torchvision 0.14)
    "resnet50": ("cnn", _tv("resnet50"), IMAGE, 1),
    "densenet121": ("cnn", _tv("densenet121"), IMAGE, 1),
    "efficientnet_b0": ("cnn", _tv("efficientnet_b0"), IMAGE, 1),
    "convnext_tiny": ("cnn", _tv("convnext_tiny"), IMAGE, 1),
    "shufflenet_v2_x1_0": ("cnn", _tv("shufflenet_v2_x1_0"), IMAGE, 1),
    "mnasnet1_0": ("cnn", _tv("mnasnet1_0"), IMAGE, 1),
    "mobilenet_v3_small": ("cnn", _tv("mobilenet_v3_small"), IMAGE, 1),
    "squeezenet1_1": ("cnn", _tv("squeezenet1_1"), IMAGE, 1),
    "regnet_y_400mf": ("cnn", _tv("regnet_y_400mf"), IMAGE, 1),
    "googlenet": ("cnn", _tv("googlenet", aux_logits=False, init_weights=False), IMAGE, 1),
    # without the auxiliary head, as googlenet: its training forward returns (logits, aux) and the loss would weigh
    # both; 299x299 is the size the network is built for (batch 1: the last maps are 8x8, batch norm sees 64)
    "inception_v3": ("cnn", _tv("inception_v3", aux_logits=False, init_weights=False),
                     [("input", (1, 3, 299, 299), "float")], 1),
    # transformers
    "vit_b_16": ("transformer", _tv("vit_b_16"), IMAGE, 1),
    "swin_t": ("transformer", _tv("swin_t"), IMAGE, 1),
    "bert_style": ("transformer", BertStyle, TOKENS, -1),
    "llama_style": ("transformer", LlamaStyle, TOKENS, -1),
    "seq2seq_transformer": ("transformer", Seq2SeqTransformer,
                            [("source", (1, 64), "long"), ("target", (1, 64), "long")], -1),
    # segmentation: logits [N, classes, H, W], labels [N, H, W] (batch 2: the ASPP pooling branch has a
    # batch norm over a 1x1 map)
    "fcn_resnet50": ("segmentation", _seg("fcn_resnet50", aux_loss=False), [("input", (2, 3, 224, 224), "float")], 1),
    "deeplabv3_mobilenet_v3_large": ("segmentation", _seg("deeplabv3_mobilenet_v3_large", aux_loss=False),
                                     [("input", (2, 3, 224, 224), "float")], 1),
    "lraspp_mobilenet_v3_large": ("segmentation", _seg("lraspp_mobilenet_v3_large"),
                                  [("input", (2, 3, 224, 224), "float")], 1),
    "unet": ("segmentation", UNet, [("input", (1, 3, 128, 128), "float")], 1),
    # 1-D (audio) and video
    "m5_audio": ("1d", M5, [("input", (1, 1, 8000), "float")], 1),
    "wav2vec_style": ("1d", Wav2VecStyle, [("input", (1, 1, 16000), "float")], 1),
    "r3d_18": ("video", lambda: video.r3d_18(weights=None), [("input", (1, 3, 16, 112, 112), "float")], 1),
}


def make_inputs(spec, seed=0):
    g = torch.Generator().manual_seed(seed)
    out = []
    for _, shape, kind in spec:
        out.append(torch.randint(0, 100, shape, generator=g) if kind == "long" else torch.randn(shape, generator=g))
    return out
