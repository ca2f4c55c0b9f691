"""Raw text inside ONNX (issue 48, "raw text in"): onnxruntime-extensions' HfJsonTokenizer given a
tokenizer.json built from the fixture SentencePiece model (normalizers Strip, whitespace squeezed,
NFKD, StripAccents, Lowercase; Metaspace; Unigram with the model's scores), against albert-tf's
ids on the original's 224 golden cases and the MRPC + SST-2 dev sentences (1,912 texts).

    python bench/onnx_tokenizer_probe.py

Measured (onnxruntime-extensions 0.15.2, tokenizer_class XLMRobertaTokenizer: the class name
must be one the library knows, AlbertTokenizer is refused): 939 of 1,912 texts differ: upper
case survives ("A" -> another id than "a"), "[CLS]" and "[SEP]" come out as the special ids,
whitespace-only text gives ids. Not wired into the exports; the files take ids
(serving/runtime_text.py).
"""
import csv
import json
import os
import sys

import numpy as np
import onnxruntime as ort
from onnxruntime_extensions import get_library_path, make_onnx_model
from onnx import helper, TensorProto
import sentencepiece as spmlib
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from albert_tf.tokenization import FullTokenizer  # noqa: E402
from albert_tf.tokenization.text_rules import preprocess_text  # noqa: E402
import pathlib  # noqa: E402
SHARED = pathlib.Path(__file__).resolve().parents[2] / "shared"
FIXTURES = SHARED / "fixtures" / "original"


def _glue_texts():
    texts = []
    with open(SHARED / "data" / "glue" / "MRPC" / "dev.tsv", encoding="utf-8", newline="") as r:
        for row in list(csv.reader(r, delimiter="\t", quoting=csv.QUOTE_NONE))[1:]:
            texts += row[3:5]
    with open(SHARED / "data" / "glue" / "SST-2" / "dev.tsv", encoding="utf-8") as r:
        texts += [line.split("\t")[0] for line in r.read().splitlines()[1:]]
    return texts


spm=str(FIXTURES/"spm"/"spm.model")
sp=spmlib.SentencePieceProcessor(model_file=spm)
vocab=[[sp.IdToPiece(i), sp.GetScore(i)] for i in range(sp.GetPieceSize())]
tj={"version":"1.0","truncation":None,"padding":None,"added_tokens":[],
 "normalizer":{"type":"Sequence","normalizers":[
   {"type":"Strip","strip_left":True,"strip_right":True},
   {"type":"Replace","pattern":{"Regex":"\\s+"},"content":" "},
   {"type":"NFKD"},{"type":"StripAccents"},{"type":"Lowercase"}]},
 "pre_tokenizer":{"type":"Metaspace","replacement":"\u2581","prepend_scheme":"always","split":False},
 "post_processor":None,"decoder":None,
 "model":{"type":"Unigram","unk_id":sp.unk_id(),"vocab":vocab,"byte_fallback":False}}
cfg={"tokenizer_class":"XLMRobertaTokenizer"}
node=helper.make_node("HfJsonTokenizer",["str"],["ids"],domain="ai.onnx.contrib",tokenizer_config=json.dumps(cfg),tokenizer_vocab=json.dumps(tj))
g=helper.make_graph([node],"t",[helper.make_tensor_value_info("str",TensorProto.STRING,["N"])],[helper.make_tensor_value_info("ids",TensorProto.INT64,["N","M"])])
m=make_onnx_model(g)
so=ort.SessionOptions(); so.log_severity_level=3; so.register_custom_ops_library(get_library_path())
s=ort.InferenceSession(m.SerializeToString(),so,providers=["CPUExecutionProvider"])
g_=json.load(open(FIXTURES/"tokenization"/"tokenization_golden.json"))["cases"]
texts=[c["text"] for c in g_]+_glue_texts()
tok=FullTokenizer(None,True,spm)
want=[c["preprocess_text(lower=True)+tokenize"]["ids"] for c in g_]+[tok.convert_tokens_to_ids(tok.tokenize(preprocess_text(t,lower=True))) for t in texts[len(g_):]]
bad=0
for t,w in zip(texts,want):
    try:
        o=s.run(None,{"str":np.array([t])})[0]; got=(o[0] if o.ndim==2 else o).tolist()
    except Exception as e: got=str(e)[:80]
    if isinstance(got,list): got=[x for x in got if x!=0] if False else got
    if got!=w:
        bad+=1
        if bad<6: print(repr(t[:60]), got if isinstance(got,str) else got[:12], w[:12])
print(len(texts),"bad",bad)
