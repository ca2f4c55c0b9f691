"""The code of TensorFlow's two TF Hub BERT tutorials, run on our exports in a process of its own
(tensorflow_hub needs the legacy tf.keras: TF_USE_LEGACY_KERAS=1, package tf-keras).

  python hub_tutorials.py PREPROCESS_DIR ENCODER_DIR REQUEST.json OUT_DIR

"Classify text with BERT" (tensorflow.org/text/tutorials/classify_text_with_bert) and "Solve GLUE
tasks using BERT" (tensorflow.org/text/tutorials/bert_glue): their calls as written there, with
`tfhub_handle_preprocess` / `tfhub_handle_encoder` pointing at our exports. Their one outside
dependency, `official.nlp.optimization.create_optimizer` (tf-models-official), is replaced by
`tf.keras.optimizers.Adam`. Results go to OUT_DIR/results.json and OUT_DIR/arrays.npz.
"""

import json
import os
import sys

import numpy as np
import tensorflow as tf
import tensorflow_hub as hub
import tensorflow_text as text  # noqa: F401  (the tutorials import it: it registers the ops)

# Not the tutorials' code: grappler's graph rewrites off. Their two fits run a handful of tiny
# steps, where optimising the training graphs on first call cost ~10 of this process's ~60 s;
# what is checked (outputs, signatures, that training runs and updates the encoder) is the same.
tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": True})

tfhub_handle_preprocess, tfhub_handle_encoder, request_path, out_dir = sys.argv[1:5]
with open(request_path, encoding="utf-8") as handle:
    request = json.load(handle)
golden = {k: tf.constant(v, tf.int32) for k, v in request["golden_inputs"].items()}
results, arrays = {}, {}

# ---------------------------------------------------------------- "Classify text with BERT"
bert_preprocess_model = hub.KerasLayer(tfhub_handle_preprocess)
text_test = ['this is such an amazing movie!']
text_preprocessed = bert_preprocess_model(text_test)
results["classify/keys"] = list(text_preprocessed.keys())
results["classify/shape"] = text_preprocessed["input_word_ids"].shape.as_list()
texts_preprocessed = bert_preprocess_model(tf.constant(request["texts"]))
results["classify/text_ids"] = texts_preprocessed["input_word_ids"].numpy().tolist()
results["classify/text_mask"] = texts_preprocessed["input_mask"].numpy().tolist()

bert_model = hub.KerasLayer(tfhub_handle_encoder)
bert_results = bert_model(text_preprocessed)
results["classify/pooled_shape"] = bert_results["pooled_output"].shape.as_list()
golden_results = bert_model(golden)
for name in ("pooled_output", "sequence_output", "default"):
    arrays[f"encoder/{name}"] = golden_results[name].numpy()
arrays["encoder/encoder_outputs"] = np.stack([x.numpy() for x in golden_results["encoder_outputs"]])


def build_classifier_model():
    text_input = tf.keras.layers.Input(shape=(), dtype=tf.string, name='text')
    preprocessing_layer = hub.KerasLayer(tfhub_handle_preprocess, name='preprocessing')
    encoder_inputs = preprocessing_layer(text_input)
    encoder = hub.KerasLayer(tfhub_handle_encoder, trainable=True, name='BERT_encoder')
    outputs = encoder(encoder_inputs)
    net = outputs['pooled_output']
    net = tf.keras.layers.Dropout(0.1)(net)
    net = tf.keras.layers.Dense(1, activation=None, name='classifier')(net)
    return tf.keras.Model(text_input, net)


classifier_model = build_classifier_model()
bert_raw_result = classifier_model(tf.constant(text_test))
results["classify/sigmoid"] = float(tf.sigmoid(bert_raw_result)[0, 0])
loss = tf.keras.losses.BinaryCrossentropy(from_logits=True)
metrics = tf.metrics.BinaryAccuracy()
optimizer = tf.keras.optimizers.Adam(3e-5)  # the tutorial: official.nlp's AdamW
classifier_model.compile(optimizer=optimizer, loss=loss, metrics=metrics)
train_ds = tf.data.Dataset.from_tensor_slices(
    (request["train_texts"], request["train_labels"])).batch(2)
encoder_layer = classifier_model.get_layer("BERT_encoder")
before = [w.numpy().copy() for w in encoder_layer.trainable_weights]
history = classifier_model.fit(x=train_ds, validation_data=train_ds, epochs=1, verbose=0)
results["classify/history"] = {k: [float(x) for x in v] for k, v in history.history.items()}
results["classify/encoder_weights"] = len(before)
results["classify/encoder_weights_changed"] = sum(
    int(not np.array_equal(b, w.numpy())) for b, w in zip(before, encoder_layer.trainable_weights))


# ------------------------------------------------------------ "Solve GLUE tasks using BERT"
def make_bert_preprocess_model(sentence_features, seq_length=128):
    input_segments = [
        tf.keras.layers.Input(shape=(), dtype=tf.string, name=ft)
        for ft in sentence_features]
    # Tokenize the text to word pieces.
    bert_preprocess = hub.load(tfhub_handle_preprocess)
    tokenizer = hub.KerasLayer(bert_preprocess.tokenize, name='tokenizer')
    segments = [tokenizer(s) for s in input_segments]
    truncated_segments = segments
    packer = hub.KerasLayer(bert_preprocess.bert_pack_inputs,
                            arguments=dict(seq_length=seq_length),
                            name='packer')
    model_inputs = packer(truncated_segments)
    return tf.keras.Model(input_segments, model_inputs)


pairs = request["pairs"]
glue_preprocess_model = make_bert_preprocess_model(['sentence1', 'sentence2'],
                                                   seq_length=request["pair_seq_length"])
pair_inputs = glue_preprocess_model([np.array([a for a, _ in pairs]),
                                     np.array([b for _, b in pairs])])
for name, value in pair_inputs.items():
    results[f"glue/{name}"] = value.numpy().tolist()
single_model = make_bert_preprocess_model(['sentence'])
results["glue/default_length"] = single_model([np.array(["a b c"])])["input_word_ids"].shape[1]

bert_preprocess = hub.load(tfhub_handle_preprocess)
tokens = bert_preprocess.tokenize(tf.constant(request["texts"][:8]))
results["glue/tokenize_rank"] = tokens.shape.rank
results["glue/tokenize"] = tokens.to_list()
results["glue/special_tokens"] = {
    k: int(v) for k, v in bert_preprocess.tokenize.get_special_tokens_dict().items()}
packed = bert_preprocess.bert_pack_inputs([tokens, tokens])  # the default seq_length
results["glue/pack_default_shape"] = packed["input_word_ids"].shape.as_list()


def build_classifier_model(num_classes):  # noqa: F811 (the second tutorial's version)
    class Classifier(tf.keras.Model):
        def __init__(self, num_classes):
            super(Classifier, self).__init__(name="prediction")
            self.encoder = hub.KerasLayer(tfhub_handle_encoder, trainable=True)
            self.dropout = tf.keras.layers.Dropout(0.1)
            self.dense = tf.keras.layers.Dense(num_classes)

        def call(self, preprocessed_text):
            encoder_outputs = self.encoder(preprocessed_text)
            pooled_output = encoder_outputs["pooled_output"]
            x = self.dropout(pooled_output)
            x = self.dense(x)
            return x

    model = Classifier(num_classes)
    return model


glue_classifier = build_classifier_model(2)
glue_classifier.compile(optimizer=tf.keras.optimizers.Adam(2e-5),
                        loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                        metrics=tf.keras.metrics.SparseCategoricalAccuracy('accuracy'))
glue_ds = tf.data.Dataset.from_tensor_slices(
    (dict(pair_inputs), np.arange(len(pairs)) % 2)).batch(4)
glue_history = glue_classifier.fit(glue_ds, epochs=1, verbose=0)
results["glue/history"] = {k: [float(x) for x in v] for k, v in glue_history.history.items()}

# The encoder's MLM sub-object, as TF Hub's albert_en_base model page calls it.
encoder = hub.load(tfhub_handle_encoder)
mlm_inputs = dict(golden, masked_lm_positions=tf.constant(request["masked_lm_positions"]))
mlm_outputs = encoder.mlm(mlm_inputs)
results["mlm/keys"] = sorted(mlm_outputs)
arrays["mlm/mlm_logits"] = mlm_outputs["mlm_logits"].numpy()
arrays["mlm/pooled_output"] = mlm_outputs["pooled_output"].numpy()
results["variables/encoder_trainable"] = sorted(v.name for v in encoder.trainable_variables)
results["variables/mlm_trainable"] = sorted(v.name for v in encoder.mlm.trainable_variables)
mlm_layer = hub.KerasLayer(encoder.mlm, trainable=True)
results["mlm/keras_layer_shape"] = mlm_layer(mlm_inputs)["mlm_logits"].shape.as_list()

os.makedirs(out_dir, exist_ok=True)
np.savez(os.path.join(out_dir, "arrays.npz"), **arrays)
with open(os.path.join(out_dir, "results.json"), "w", encoding="utf-8") as handle:
    json.dump(results, handle)
