"""The attention explorer: every head of the encoder, the decoder and the cross attention for a typed sentence."""

from __future__ import annotations

import numpy as np
import streamlit as st

from pages.common import EXAMPLES, MAX_TEXT, current_checkpoint, figure, get_analysis, probe_heads
from transformer import figures
from transformer.tokenizer import word_groups
from transformer.views import WORD_MERGE_RULE, diff_labels, difference, merge_words, to_csv, word_labels

KINDS = {
    "encoder": "Encoder self-attention",
    "decoder": "Decoder masked self-attention",
    "cross": "Encoder–decoder (cross) attention",
}
CFG = figures.PLOT_CONFIG


def plot(fig, key: str) -> None:
    st.plotly_chart(fig, width="stretch", config=CFG, key=key, theme=None)


def _enlarge_clicked() -> None:
    """Runs before the rerun: a clicked dot of the overview becomes the enlarged head."""
    event = st.session_state.get("overview") or {}
    points = (event.get("selection") or {}).get("points") or []
    custom = points[0].get("customdata") if points else None
    if custom:
        st.session_state["ov_layer"], st.session_state["ov_head"] = int(custom[0]), int(custom[1])


def csv_button(matrix: np.ndarray, rows: list[str], cols: list[str], name: str, key: str) -> None:
    st.download_button(
        "CSV",
        to_csv(matrix, rows, cols),
        file_name=f"{name}.csv",
        mime="text/csv",
        key=key,
        help="Download this matrix (rows = queries, columns = keys).",
    )


st.title("Attention explorer")
path, ckpt = current_checkpoint()
cfg = ckpt.config
text = str(st.session_state.get("text", ""))
beam = int(st.session_state.get("beam", 1))

if not text.strip():
    st.info("Type an English sentence in the sidebar (or pick an example) to see what every head does with it.")
    st.stop()
if len(text) >= MAX_TEXT:
    st.warning(f"Only the first {MAX_TEXT:,} characters are used.")

a = get_analysis(path, text, beam)
# the probe's best cross-attention head (where this checkpoint decides il/elle) is the default view
best_cross = probe_heads(ckpt, "cross")
BEST_LAYER, BEST_HEAD = (
    (int(best_cross[0]["layer"]), int(best_cross[0]["head"])) if best_cross else (a.cross.shape[0] - 1, 0)
)
PRONOUN_STEP = next((i for i, p in enumerate(a.output_pieces) if p.strip("▁'") in ("il", "elle", "ils", "elles")), None)
if a.truncated:
    st.warning(
        f"The sentence has {a.n_pieces} pieces but the model reads at most {cfg.max_len - 1}; "
        f"only the first {cfg.max_len - 1} pieces were translated."
    )
if a.unknown_words:
    st.warning("The tokenizer does not know some characters; these words became <unk> pieces:")
    st.text(", ".join(a.unknown_words))

st.caption("Translation")
st.text(a.translation or "(empty)")
with st.expander("Pieces (sentencepiece tokens)"):
    st.text("source:  " + " ".join(a.source_pieces))
    st.text("decoder input:  " + " ".join(a.target_pieces))
    st.text("produced:  " + " ".join(a.output_pieces))

tabs = st.tabs(["Heads", "All heads", "Token focus", "Words", "Compare two sentences", "Decoding replay"])

# ---------------------------------------------------------------- one head per kind
with tabs[0]:
    st.caption(
        "Rows are queries, columns are keys; each row sums to 1. Decoder rows are named by the token they produce. "
        "PNG: camera icon in the chart's toolbar."
    )
    slots = st.columns(2) + st.columns(2)
    for col, kind in zip(slots, ("encoder", "cross", "decoder")):
        with col:
            maps = a.maps(kind)
            L, H = maps.shape[:2]
            c1, c2 = st.columns(2)
            default = (BEST_LAYER, BEST_HEAD) if kind == "cross" else (L - 1, 0)
            layer = c1.selectbox("Layer", range(L), key=f"layer_{kind}", index=default[0])
            head = c2.selectbox("Head", range(H), key=f"head_{kind}", index=default[1])
            rows, keys = a.labels(kind)
            plot(
                figure(path, text, beam, "head", kind, layer, head, f"{KINDS[kind]} · L{layer} H{head}"), f"one_{kind}"
            )
            csv_button(maps[layer, head], rows, keys, f"{kind}_L{layer}_H{head}", f"csv_{kind}")
    with slots[3]:
        st.caption("How to read these")
        st.text(
            "Encoder self-attention: every English piece looks at every other (padding hidden).\n"
            "Cross attention: each French piece, while being produced, looks at the English pieces.\n"
            "Decoder self-attention: each French piece looks only at the pieces before it\n"
            "(the look-ahead mask zeroes everything above the diagonal)."
        )

# ---------------------------------------------------------------- overview
with tabs[1]:
    kind = st.radio("Attention", list(KINDS), format_func=KINDS.get, horizontal=True, key="overview_kind")
    maps = a.maps(kind)
    L, H = maps.shape[:2]
    c1, c2 = st.columns(2)
    layer = c1.selectbox("Enlarge layer", range(L), key="ov_layer")
    head = c2.selectbox("Enlarge head", range(H), key="ov_head")
    st.caption("Click a head's dot (or use the pickers) to enlarge it below.")
    st.plotly_chart(
        figure(path, text, beam, "overview", kind, layer, head, f"{KINDS[kind]}: {L} layers × {H} heads"),
        width="stretch",
        config=CFG,
        theme=None,
        key="overview",
        on_select=_enlarge_clicked,
        selection_mode="points",
    )
    rows, keys = a.labels(kind)
    plot(figure(path, text, beam, "head", kind, layer, head, f"Layer {layer}, head {head}"), "overview_big")
    csv_button(maps[layer, head], rows, keys, f"{kind}_L{layer}_H{head}", "csv_overview")

# ---------------------------------------------------------------- token focus
with tabs[2]:
    st.caption(
        "One token's attention row in every layer and head at once. ★ marks the heads whose pronoun row puts "
        "more weight on the antecedent than on the other noun(s) in at least 80% of held-out sentences "
        "(the coreference probe recorded in the checkpoint's card), with that share."
    )
    best = {kind: probe_heads(ckpt, kind) for kind in ("encoder", "cross")}
    if best["encoder"] or best["cross"]:
        st.caption(
            "Best heads of the probe: "
            + "; ".join(
                f"{KINDS[kind]} L{int(h[0]['layer'])} H{int(h[0]['head'])} = {float(h[0]['score']):.3f}"
                for kind, h in best.items()
                if h
            )
        )
    src_labels = [f"{i}: {p}" for i, p in enumerate(a.source_pieces)]
    default_src = next((i for i, p in enumerate(a.source_pieces) if p.strip("▁").lower() in ("it", "they")), 0)
    q = st.selectbox(
        "Source token (encoder query)",
        range(len(src_labels)),
        format_func=src_labels.__getitem__,
        index=default_src,
        key="focus_src",
    )
    plot(
        figure(path, text, beam, "focus", "encoder", q, f"Encoder self-attention from {a.source_pieces[q]!r}"),
        "focus_enc",
    )
    out_labels = [f"{i}: {p}" for i, p in enumerate(a.output_pieces)]
    default_out = PRONOUN_STEP or 0
    t = st.selectbox(
        "Produced token (cross-attention query)",
        range(len(out_labels)),
        format_func=out_labels.__getitem__,
        index=min(default_out, max(len(out_labels) - 1, 0)),
        key="focus_tgt",
    )
    if a.output_pieces:
        plot(
            figure(path, text, beam, "focus", "cross", t, f"Cross-attention while producing {a.output_pieces[t]!r}"),
            "focus_cross",
        )

# ---------------------------------------------------------------- words
with tabs[3]:
    st.caption("Merging rule: " + WORD_MERGE_RULE)
    kind = st.radio("Attention", list(KINDS), format_func=KINDS.get, horizontal=True, key="word_kind")
    maps = a.maps(kind)
    rows, keys = a.labels(kind)
    rg, kg = word_groups(rows), word_groups(keys)
    merged = merge_words(maps, rg, kg)
    c1, c2 = st.columns(2)
    layer = c1.selectbox("Layer", range(maps.shape[0]), key="word_layer", index=maps.shape[0] - 1)
    head = c2.selectbox("Head", range(maps.shape[1]), key="word_head")
    rl, kl = word_labels(rows, rg), word_labels(keys, kg)
    plot(figure(path, text, beam, "words", kind, layer, head, f"{KINDS[kind]} by word · L{layer} H{head}"), "words")
    csv_button(merged[layer, head], rl, kl, f"{kind}_words_L{layer}_H{head}", "csv_words")

# ---------------------------------------------------------------- compare
with tabs[4]:
    st.caption(
        "Two sentences that differ in one word: what changes in each head? Red = more weight in A, blue = more in B."
    )
    c1, c2 = st.columns(2)
    text_a = c1.text_input("Sentence A", EXAMPLES[0], key="cmp_a", max_chars=MAX_TEXT)
    text_b = c2.text_input("Sentence B", EXAMPLES[1], key="cmp_b", max_chars=MAX_TEXT)
    if not text_a.strip() or not text_b.strip():
        st.info("Type two sentences to compare.")
    else:
        aa, bb = get_analysis(path, text_a, beam), get_analysis(path, text_b, beam)
        c1.text(aa.translation)
        c2.text(bb.translation)
        kind = st.radio("Attention", ["cross", "encoder"], format_func=KINDS.get, horizontal=True, key="cmp_kind")
        ma, mb = aa.maps(kind), bb.maps(kind)
        k1, k2 = st.columns(2)
        default = (BEST_LAYER, BEST_HEAD) if kind == "cross" else (ma.shape[0] - 1, 0)
        layer = k1.selectbox("Layer", range(ma.shape[0]), key=f"cmp_layer_{kind}", index=default[0])
        head = k2.selectbox("Head", range(ma.shape[1]), key=f"cmp_head_{kind}", index=default[1])
        ra, ka = aa.labels(kind)
        rb, kb = bb.labels(kind)
        p1, p2, p3 = st.columns(3)
        with p1:
            plot(figure(path, text_a, beam, "head", kind, layer, head, "A"), "cmp_fig_a")
        with p2:
            plot(figure(path, text_b, beam, "head", kind, layer, head, "B"), "cmp_fig_b")
        diff = difference(ma, mb)
        with p3:
            plot(figure(path, text_a, beam, "diff", text_b, kind, layer, head, "A − B"), "cmp_fig_diff")
            rl, kl = diff_labels(ra, rb, diff.rows), diff_labels(ka, kb, diff.cols)
            csv_button(diff.delta[layer, head], rl, kl, f"diff_{kind}_L{layer}_H{head}", "csv_diff")
        if not diff.same_shape:
            st.warning(
                f"The two maps differ in size ({ma.shape[-2]}×{ma.shape[-1]} vs {mb.shape[-2]}×{mb.shape[-1]}); "
                "the difference covers the positions they share."
            )

# ---------------------------------------------------------------- replay
with tabs[5]:
    T = len(a.output_pieces)
    if T == 0:
        st.info("Nothing was produced.")
    else:
        start = T if PRONOUN_STEP is None else PRONOUN_STEP + 1  # open on the step that writes the pronoun
        step = st.slider("Decoding step", 1, T, value=start, key="replay_step") if T > 1 else 1
        layer = st.selectbox("Layer", range(a.cross.shape[0]), index=BEST_LAYER, key="replay_layer")
        st.caption("Produced so far (the last piece is the one this step chose)")
        st.text(" ".join(a.output_pieces[:step]))
        c1, c2 = st.columns([3, 1])
        with c1:
            title = f"Step {step}: cross-attention of layer {layer} while producing {a.output_pieces[step - 1]!r}"
            plot(figure(path, text, beam, "replay", layer, step, title), "replay")
        with c2:
            plot(figure(path, text, beam, "candidates", step), "candidates")
