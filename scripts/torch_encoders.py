"""Hugging Face's encoder models written out in plain PyTorch, operation for operation as transformers computes them
(no `transformers` package needed): four families (BERT, ELECTRA, DistilBERT, RoBERTa; XLM-RoBERTa runs RoBERTa's
code under RoBERTa's tensor names, MiniLM is a plain BERT) times four heads (question answering, sequence
classification, token classification, masked LM).

Read against transformers' models/{bert,electra,distilbert,roberta}/modeling_*.py and configuration_*.py. The
numbers are those of the "eager" attention path; SDPA and flash attention compute the same thing in another order.
Where transformers versions differ, the code follows the classic v4 form and says so (DistilBERT's attention).

    parameter_shapes(config, head)   HF tensor name -> shape, in XForY.state_dict() order, each tied tensor once,
                                     under the name HF's model.safetensors keeps (tied_parameters says the rest)
    forward(P, config, head, batch)  -> (loss, logits) with HF's loss for the head
    hf_init(config, head, generator) HF's _init_weights, drawn in parameter_shapes order

`config` is a config.json as a dict; `batch` a dict of tensors named as HF's forward() arguments (input_ids,
attention_mask, token_type_ids, labels, start_positions, end_positions). scripts/encoder_reference.py writes the
fixtures from these, and benchmarks/pytorch_step.py times them; scripts/torch_bert_qa.py is the BERT
question-answering case alone (pytorch_reference.py uses it).
"""
import math

import torch
import torch.nn.functional as F

HEADS = ("question_answering", "sequence_classification", "token_classification", "masked_lm")
MODEL_TYPES = ("bert", "electra", "distilbert", "roberta", "xlm-roberta")

# model_type -> the code (and base_model_prefix, so the tensor-name prefix) transformers runs for it.
# XLMRobertaModel is a copy of RobertaModel and its base_model_prefix is "roberta".
FAMILY = {"bert": "bert", "electra": "electra", "distilbert": "distilbert", "roberta": "roberta",
          "xlm-roberta": "roberta"}
_CLASS = {"bert": "Bert", "electra": "Electra", "distilbert": "DistilBert", "roberta": "Roberta",
          "xlm-roberta": "XLMRoberta"}
_HEAD_CLASS = {"question_answering": "ForQuestionAnswering", "sequence_classification": "ForSequenceClassification",
               "token_classification": "ForTokenClassification", "masked_lm": "ForMaskedLM"}

# Each XForMaskedLM's _tied_weights_keys: the state_dict names save_pretrained drops from model.safetensors because
# they share storage with another kept tensor (the output projection is the word table; BERT's and RoBERTa's
# decoder.bias is the same Parameter as the head's own `bias`, linked so resize_token_embeddings resizes both).
TIED_WEIGHTS_KEYS = {
    "bert": ["predictions.decoder.bias", "cls.predictions.decoder.weight"],
    "roberta": ["lm_head.decoder.weight", "lm_head.decoder.bias"],
    "distilbert": ["vocab_projector.weight"],
    "electra": ["generator_lm_head.weight"],
}


def family(c):
    return FAMILY[c["model_type"]]


def architecture(model_type, head):
    """The class name config.json's "architectures" holds, e.g. DistilBertForSequenceClassification."""
    return _CLASS[model_type] + _HEAD_CLASS[head]


def dims(c):
    """(hidden, embedding width, layers, heads, intermediate) under either family's config names. DistilBERT's
    config calls them dim / n_layers / n_heads / hidden_dim (its attribute_map aliases hidden_size etc.); ELECTRA's
    embeddings are embedding_size wide."""
    if family(c) == "distilbert":
        return c["dim"], c["dim"], c["n_layers"], c["n_heads"], c["hidden_dim"]
    h = c["hidden_size"]
    e = c.get("embedding_size", h) if family(c) == "electra" else h
    return h, e, c["num_hidden_layers"], c["num_attention_heads"], c["intermediate_size"]


def num_labels(c, head):
    if head == "question_answering":
        return 2  # start and end logits; DistilBertForQuestionAnswering even raises unless num_labels == 2
    if "num_labels" in c:
        return c["num_labels"]
    return len(c.get("id2label", {"0": 0, "1": 1}))  # PretrainedConfig's default is two labels


def _linear(shapes, name, n_out, n_in):
    shapes[name + ".weight"] = [n_out, n_in]
    shapes[name + ".bias"] = [n_out]


def _norm(shapes, name, n):
    shapes[name + ".weight"] = [n]
    shapes[name + ".bias"] = [n]


def _encoder_shapes(c, head):
    fam = family(c)
    h, e, layers, _, inter = dims(c)
    p = fam + "."
    s = {}
    s[p + "embeddings.word_embeddings.weight"] = [c["vocab_size"], e]
    s[p + "embeddings.position_embeddings.weight"] = [c["max_position_embeddings"], e]
    if fam != "distilbert":  # DistilBERT has no token type embeddings at all
        s[p + "embeddings.token_type_embeddings.weight"] = [c["type_vocab_size"], e]
    _norm(s, p + "embeddings.LayerNorm", e)
    if fam == "electra" and e != h:
        # ElectraModel.__init__ registers it after the embeddings (only when the widths differ)
        _linear(s, p + "embeddings_project", h, e)
    for l in range(layers):
        if fam == "distilbert":
            q = f"{p}transformer.layer.{l}."
            for n in ("q_lin", "k_lin", "v_lin", "out_lin"):
                _linear(s, q + "attention." + n, h, h)
            _norm(s, q + "sa_layer_norm", h)
            _linear(s, q + "ffn.lin1", inter, h)
            _linear(s, q + "ffn.lin2", h, inter)
            _norm(s, q + "output_layer_norm", h)
        else:
            q = f"{p}encoder.layer.{l}."
            for n in ("query", "key", "value"):
                _linear(s, q + "attention.self." + n, h, h)
            _linear(s, q + "attention.output.dense", h, h)
            _norm(s, q + "attention.output.LayerNorm", h)
            _linear(s, q + "intermediate.dense", inter, h)
            _linear(s, q + "output.dense", h, inter)
            _norm(s, q + "output.LayerNorm", h)
    if fam == "bert" and head == "sequence_classification":
        # Only BertForSequenceClassification keeps BertModel's pooler (the QA, token and MLM classes build
        # BertModel(add_pooling_layer=False)); RoBERTa's classes never use theirs.
        _linear(s, p + "pooler.dense", h, h)
    return s


def parameter_shapes(c, head):
    """HF tensor name -> shape for model_type c["model_type"] with `head`, as model.safetensors holds them:
    every trainable tensor once. For masked LM the output projection's weight is the word embedding table (and
    for BERT and RoBERTa the decoder's bias is the head's `bias`): see tied_parameters."""
    fam = family(c)
    h, e, _, _, _ = dims(c)
    v = c["vocab_size"]
    s = _encoder_shapes(c, head)
    n = num_labels(c, head)
    if head == "question_answering":
        _linear(s, "qa_outputs", 2, h)
    elif head == "sequence_classification":
        if fam == "bert":
            _linear(s, "classifier", n, h)
        elif fam == "distilbert":
            _linear(s, "pre_classifier", h, h)
            _linear(s, "classifier", n, h)
        else:  # RobertaClassificationHead / ElectraClassificationHead
            _linear(s, "classifier.dense", h, h)
            _linear(s, "classifier.out_proj", n, h)
    elif head == "token_classification":
        _linear(s, "classifier", n, h)
    elif head == "masked_lm":
        # state_dict order: a module's own Parameters come before its children's, so the heads' `bias` leads.
        if fam == "bert":
            s["cls.predictions.bias"] = [v]
            _linear(s, "cls.predictions.transform.dense", h, h)
            _norm(s, "cls.predictions.transform.LayerNorm", h)
        elif fam == "roberta":
            s["lm_head.bias"] = [v]
            _linear(s, "lm_head.dense", h, h)
            _norm(s, "lm_head.layer_norm", h)
        elif fam == "distilbert":
            _linear(s, "vocab_transform", h, h)
            _norm(s, "vocab_layer_norm", h)
            s["vocab_projector.bias"] = [v]  # its own: only vocab_projector.weight is tied
        else:
            # ElectraGeneratorPredictions registers LayerNorm before dense; both are embedding_size wide at the
            # output, so the tied generator_lm_head maps embedding_size -> vocab like the word table.
            _norm(s, "generator_predictions.LayerNorm", e)
            _linear(s, "generator_predictions.dense", e, h)
            s["generator_lm_head.bias"] = [v]
    else:
        raise ValueError(f"unknown head {head!r}")
    return s


def tied_parameters(c, head):
    """state_dict names that model.safetensors leaves out -> the kept name whose tensor they are. Only masked LM
    ties anything (with tie_word_embeddings, true by default)."""
    if head != "masked_lm":
        return {}
    if not c.get("tie_word_embeddings", True):
        raise NotImplementedError("an untied masked-LM decoder is not modelled here")
    fam = family(c)
    word = fam + ".embeddings.word_embeddings.weight"
    return {
        "bert": {"cls.predictions.decoder.weight": word, "cls.predictions.decoder.bias": "cls.predictions.bias"},
        "roberta": {"lm_head.decoder.weight": word, "lm_head.decoder.bias": "lm_head.bias"},
        "distilbert": {"vocab_projector.weight": word},
        "electra": {"generator_lm_head.weight": word},
    }[fam]


def padding_rows(c):
    """Embedding name -> the row nn.Embedding(padding_idx=...) keeps: HF's _init_weights zeroes it, and it gets no
    gradient from the lookup. RoBERTa's position table has one too (its padded positions all read row pad)."""
    fam = family(c)
    rows = {fam + ".embeddings.word_embeddings.weight": c["pad_token_id"]}
    if fam == "roberta":
        rows[fam + ".embeddings.position_embeddings.weight"] = c["pad_token_id"]
    return rows


def is_layer_norm(name):
    return any(k in name for k in ("LayerNorm.", "layer_norm."))


def hf_init(c, head, generator):
    """HF's _init_weights (the same in all four families): Linear and Embedding weights ~ normal(0,
    initializer_range), biases 0, the padding_idx rows 0, LayerNorm weight 1 and bias 0, and the MLM heads' own bias
    0. Drawn in parameter_shapes order from `generator`, so deterministic, though not HF's exact draws (HF draws in
    module-visit order from the global generator and then overwrites the tied decoder with the word table)."""
    std = c["initializer_range"]
    P = {}
    for name, shape in parameter_shapes(c, head).items():
        if is_layer_norm(name):
            t = torch.ones(shape) if name.endswith(".weight") else torch.zeros(shape)
        elif name.endswith(".bias"):
            t = torch.zeros(shape)
        else:
            t = torch.empty(shape).normal_(0.0, std, generator=generator)
        P[name] = t
    for name, row in padding_rows(c).items():
        P[name][row].zero_()
    return P


def activation(name):
    """transformers' ACT2FN for the names these configs use."""
    if name == "gelu":
        return F.gelu  # GELUActivation: the exact erf form
    if name == "relu":
        return F.relu
    if name in ("gelu_new", "gelu_pytorch_tanh"):
        return lambda x: F.gelu(x, approximate="tanh")  # same function; gelu_new spells it out in tanh/pow
    if name in ("silu", "swish"):
        return F.silu
    if name == "tanh":
        return torch.tanh
    raise ValueError(f"activation {name!r} is not modelled here")


def _dropper(training):
    return lambda t, p: F.dropout(t, p, True) if training and p > 0 else t


def _layer_norm(x, w, b, eps):
    """F.layer_norm, and under CPU bf16 autocast what torch >= 2.0 does with a bf16 input and the fp32 weights
    autocast leaves alone (pytorch PR 81851, mixed-dtype LayerNorm: computed in fp32, returned as bf16). torch 1.13
    raises there instead ("expected scalar type BFloat16 but found Float") wherever a LayerNorm's input is a bf16
    Linear output: the MLM heads' LayerNorm, and ELECTRA's whole encoder (embeddings_project is a Linear, so the
    residual stream is bf16 from there on). In fp32 this is plain F.layer_norm."""
    if x.dtype != w.dtype:
        return F.layer_norm(x.to(w.dtype), (x.shape[-1],), w, b, eps).to(x.dtype)
    return F.layer_norm(x, (x.shape[-1],), w, b, eps)


def _bert_like_encoder(P, c, batch, training):
    """BertModel / ElectraModel / RobertaModel up to the last hidden state (modeling_bert.py's eager path)."""
    fam = family(c)
    p = fam + "."
    h, e, layers, heads, _ = dims(c)
    d = h // heads
    eps = c["layer_norm_eps"]
    pad = c["pad_token_id"]
    drop = _dropper(training)
    hp, ap = c["hidden_dropout_prob"], c["attention_probs_dropout_prob"]
    input_ids, attention_mask = batch["input_ids"], batch["attention_mask"]
    b, s = input_ids.shape
    token_type_ids = batch.get("token_type_ids")
    if token_type_ids is None:
        token_type_ids = torch.zeros_like(input_ids)  # the zeros buffer HF falls back to
    if fam == "roberta":
        # create_position_ids_from_input_ids: real tokens count up from pad+1, pad tokens sit at pad (fairseq's
        # make_positions), so a left-padded row still starts at pad+1, and the table needs max_len + pad + 1 rows.
        # It looks at input_ids, not at attention_mask.
        mask = input_ids.ne(pad).int()
        positions = (torch.cumsum(mask, dim=1).type_as(mask) * mask).long() + pad
        position_padding_idx = pad  # RobertaEmbeddings' position table is nn.Embedding(..., padding_idx=pad)
    else:
        positions = torch.arange(s).unsqueeze(0).expand(b, s)
        position_padding_idx = None
    # BertEmbeddings: inputs_embeds + token_type_embeddings, then + position_embeddings, LayerNorm, dropout.
    # padding_idx matters for the backward only: the pad row gets no gradient from the lookup.
    x = F.embedding(input_ids, P[p + "embeddings.word_embeddings.weight"], padding_idx=pad)
    x = x + F.embedding(token_type_ids, P[p + "embeddings.token_type_embeddings.weight"])
    x = x + F.embedding(positions, P[p + "embeddings.position_embeddings.weight"], padding_idx=position_padding_idx)
    x = _layer_norm(x, P[p + "embeddings.LayerNorm.weight"], P[p + "embeddings.LayerNorm.bias"], eps)
    x = drop(x, hp)
    if fam == "electra" and e != h:
        # ElectraModel: after the embeddings' LayerNorm and dropout, before the first layer
        x = F.linear(x, P[p + "embeddings_project.weight"], P[p + "embeddings_project.bias"])
    # get_extended_attention_mask: (1 - mask) * finfo(param dtype).min, broadcast over heads and queries
    ext = (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * torch.finfo(torch.float32).min
    act = activation(c["hidden_act"])
    for l in range(layers):
        q_ = f"{p}encoder.layer.{l}."
        lin = lambda t, n: F.linear(t, P[q_ + n + ".weight"], P[q_ + n + ".bias"])
        split = lambda t: t.view(b, s, heads, d).permute(0, 2, 1, 3)
        q, k, v = (split(lin(x, "attention.self." + n)) for n in ("query", "key", "value"))
        # scores divided by sqrt(d) AFTER the matmul, then the additive mask
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(d) + ext
        probs = drop(F.softmax(scores, dim=-1), ap)
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous().view(b, s, h)
        x = _layer_norm(drop(lin(ctx, "attention.output.dense"), hp) + x,
                        P[q_ + "attention.output.LayerNorm.weight"], P[q_ + "attention.output.LayerNorm.bias"], eps)
        f = act(lin(x, "intermediate.dense"))
        x = _layer_norm(drop(lin(f, "output.dense"), hp) + x, P[q_ + "output.LayerNorm.weight"],
                        P[q_ + "output.LayerNorm.bias"], eps)
    return x


def _distilbert_encoder(P, c, batch, training):
    """DistilBertModel up to the last hidden state, as modeling_distilbert.py's MultiHeadSelfAttention (the v4
    eager form; transformers v5 routes DistilBERT through BERT's eager_attention_forward, which scales the scores
    after the matmul and adds the mask: equal but for rounding, and for rows with every key masked)."""
    p = "distilbert."
    h, _, layers, heads, _ = dims(c)
    d = h // heads
    eps = 1e-12  # hard-coded in Embeddings and TransformerBlock: DistilBertConfig has no layer_norm_eps
    drop = _dropper(training)
    hp, ap = c["dropout"], c["attention_dropout"]
    if c.get("sinusoidal_pos_embds", False):
        # the table is then fixed sinusoids, not a trained tensor (requires_grad False): not modelled
        raise NotImplementedError("sinusoidal_pos_embds")
    input_ids, attention_mask = batch["input_ids"], batch["attention_mask"]
    b, s = input_ids.shape
    positions = torch.arange(s).unsqueeze(0).expand(b, s)  # no token types; positions 0..s-1 whatever the padding
    x = F.embedding(input_ids, P[p + "embeddings.word_embeddings.weight"], padding_idx=c["pad_token_id"])
    x = x + F.embedding(positions, P[p + "embeddings.position_embeddings.weight"])
    x = _layer_norm(x, P[p + "embeddings.LayerNorm.weight"], P[p + "embeddings.LayerNorm.bias"], eps)
    x = drop(x, hp)
    act = activation(c["activation"])
    for l in range(layers):
        q_ = f"{p}transformer.layer.{l}."
        lin = lambda t, n: F.linear(t, P[q_ + n + ".weight"], P[q_ + n + ".bias"])
        shape = lambda t: t.view(b, -1, heads, d).transpose(1, 2)
        q = shape(lin(x, "attention.q_lin"))
        k = shape(lin(x, "attention.k_lin"))
        v = shape(lin(x, "attention.v_lin"))
        q = q / math.sqrt(d)  # DistilBERT scales q BEFORE the matmul (BERT scales the scores after)
        scores = torch.matmul(q, k.transpose(2, 3))
        # masked_fill with finfo(scores.dtype).min, not an additive mask: masked scores are exactly min
        masked = (attention_mask == 0).view(b, 1, 1, s).expand_as(scores)
        scores = scores.masked_fill(masked, torch.tensor(torch.finfo(scores.dtype).min))
        weights = drop(F.softmax(scores, dim=-1), ap)
        ctx = torch.matmul(weights, v).transpose(1, 2).contiguous().view(b, -1, heads * d)
        ctx = lin(ctx, "attention.out_lin")  # no dropout here, unlike BertSelfOutput
        x = _layer_norm(ctx + x, P[q_ + "sa_layer_norm.weight"], P[q_ + "sa_layer_norm.bias"], eps)
        f = drop(lin(act(lin(x, "ffn.lin1")), "ffn.lin2"), hp)
        x = _layer_norm(f + x, P[q_ + "output_layer_norm.weight"], P[q_ + "output_layer_norm.bias"], eps)
    return x


def encoder(P, c, batch, training=False):
    if family(c) == "distilbert":
        return _distilbert_encoder(P, c, batch, training)
    return _bert_like_encoder(P, c, batch, training)


def _classifier_dropout(c):
    # classifier_dropout if set (not None), else hidden_dropout_prob (BERT, RoBERTa, ELECTRA heads)
    cd = c.get("classifier_dropout")
    return c["hidden_dropout_prob"] if cd is None else cd


def problem_type(c, labels):
    """HF's rule when config.problem_type is None: one label is regression, integer labels single-label, float
    labels multi-label."""
    pt = c.get("problem_type")
    if pt is not None:
        return pt
    if num_labels(c, "sequence_classification") == 1:
        return "regression"
    if labels.dtype in (torch.long, torch.int):
        return "single_label_classification"
    return "multi_label_classification"


def forward(P, c, head, batch, training=False):
    """(loss, logits) of HF's <Family><Head> on `batch`; loss is None when the batch has no labels. logits:
    QA [b, s, 2] (start, end stacked last, as qa_outputs computes them), sequence classification [b, num_labels],
    token classification [b, s, num_labels], masked LM [b, s, vocab]."""
    fam = family(c)
    drop = _dropper(training)
    x = encoder(P, c, batch, training)
    if head == "question_answering":
        if fam == "distilbert":
            x = drop(x, c["qa_dropout"])  # only DistilBERT drops out before qa_outputs
        logits = F.linear(x, P["qa_outputs.weight"], P["qa_outputs.bias"])
        if "start_positions" not in batch:
            return None, logits
        start_logits, end_logits = logits.split(1, dim=-1)
        start_logits, end_logits = start_logits.squeeze(-1).contiguous(), end_logits.squeeze(-1).contiguous()
        # positions outside the sequence are clamped to s and then ignored (ignore_index = s); the mean is over the
        # remaining examples, so start and end can average over different counts
        ignored = start_logits.size(1)
        sp = batch["start_positions"].clamp(0, ignored)
        ep = batch["end_positions"].clamp(0, ignored)
        loss = (F.cross_entropy(start_logits, sp, ignore_index=ignored) +
                F.cross_entropy(end_logits, ep, ignore_index=ignored)) / 2
        return loss, logits

    if head == "sequence_classification":
        n = num_labels(c, head)
        if fam == "bert":
            # BertPooler: tanh(dense(hidden[:, 0])), then dropout and the classifier
            pooled = torch.tanh(F.linear(x[:, 0], P["bert.pooler.dense.weight"], P["bert.pooler.dense.bias"]))
            logits = F.linear(drop(pooled, _classifier_dropout(c)), P["classifier.weight"], P["classifier.bias"])
        elif fam == "distilbert":
            pooled = F.linear(x[:, 0], P["pre_classifier.weight"], P["pre_classifier.bias"])
            pooled = drop(F.relu(pooled), c["seq_classif_dropout"])
            logits = F.linear(pooled, P["classifier.weight"], P["classifier.bias"])
        else:
            # RobertaClassificationHead (tanh) / ElectraClassificationHead (gelu, fixed: not config.hidden_act):
            # token 0, dropout, dense, activation, dropout, out_proj
            t = drop(x[:, 0, :], _classifier_dropout(c))
            t = F.linear(t, P["classifier.dense.weight"], P["classifier.dense.bias"])
            t = torch.tanh(t) if fam == "roberta" else F.gelu(t)
            t = drop(t, _classifier_dropout(c))
            logits = F.linear(t, P["classifier.out_proj.weight"], P["classifier.out_proj.bias"])
        labels = batch.get("labels")
        if labels is None:
            return None, logits
        pt = problem_type(c, labels)
        if pt == "regression":
            loss = F.mse_loss(logits.squeeze(), labels.squeeze()) if n == 1 else F.mse_loss(logits, labels)
        elif pt == "single_label_classification":
            loss = F.cross_entropy(logits.view(-1, n), labels.view(-1))
        elif pt == "multi_label_classification":
            loss = F.binary_cross_entropy_with_logits(logits, labels)  # labels float, [b, num_labels]
        else:
            raise ValueError(f"unknown problem_type {pt!r}")
        return loss, logits

    if head == "token_classification":
        n = num_labels(c, head)
        p = c["dropout"] if fam == "distilbert" else _classifier_dropout(c)
        logits = F.linear(drop(x, p), P["classifier.weight"], P["classifier.bias"])
        labels = batch.get("labels")
        if labels is None:
            return None, logits
        # CrossEntropyLoss over every position, -100 ignored (the data collator puts -100 on padding and on
        # special tokens). Some v4 releases of RoBERTa also turned labels under attention_mask == 0 into -100;
        # a batch with -100 there gets the same loss either way.
        return F.cross_entropy(logits.view(-1, n), labels.view(-1)), logits

    if head == "masked_lm":
        v = c["vocab_size"]
        word = P[fam + ".embeddings.word_embeddings.weight"]  # the tied output projection
        if fam == "bert":
            # BertPredictionHeadTransform (dense, ACT2FN[hidden_act], LayerNorm), then decoder = word table + bias
            t = F.linear(x, P["cls.predictions.transform.dense.weight"], P["cls.predictions.transform.dense.bias"])
            t = activation(c["hidden_act"])(t)
            t = _layer_norm(t, P["cls.predictions.transform.LayerNorm.weight"],
                             P["cls.predictions.transform.LayerNorm.bias"], c["layer_norm_eps"])
            logits = F.linear(t, word, P["cls.predictions.bias"])
        elif fam == "roberta":
            # RobertaLMHead: dense, gelu (fixed, whatever hidden_act says), layer_norm, decoder + bias
            t = F.gelu(F.linear(x, P["lm_head.dense.weight"], P["lm_head.dense.bias"]))
            t = _layer_norm(t, P["lm_head.layer_norm.weight"], P["lm_head.layer_norm.bias"],
                             c["layer_norm_eps"])
            logits = F.linear(t, word, P["lm_head.bias"])
        elif fam == "distilbert":
            # vocab_transform, activation (config.activation), vocab_layer_norm (eps 1e-12), vocab_projector
            t = activation(c["activation"])(F.linear(x, P["vocab_transform.weight"], P["vocab_transform.bias"]))
            t = _layer_norm(t, P["vocab_layer_norm.weight"], P["vocab_layer_norm.bias"], 1e-12)
            logits = F.linear(t, word, P["vocab_projector.bias"])
        else:
            # ElectraGeneratorPredictions: dense (hidden -> embedding_size), gelu (fixed), LayerNorm; then
            # generator_lm_head (embedding_size -> vocab, weight = word table)
            t = F.gelu(F.linear(x, P["generator_predictions.dense.weight"], P["generator_predictions.dense.bias"]))
            t = _layer_norm(t, P["generator_predictions.LayerNorm.weight"],
                             P["generator_predictions.LayerNorm.bias"], c["layer_norm_eps"])
            logits = F.linear(t, word, P["generator_lm_head.bias"])
        labels = batch.get("labels")
        if labels is None:
            return None, logits
        return F.cross_entropy(logits.view(-1, v), labels.view(-1)), logits  # -100 ignored (the default)

    raise ValueError(f"unknown head {head!r}")
