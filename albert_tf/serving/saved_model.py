"""The one way this package writes a SavedModel, and the one version-folder rule.

Every export (encoder, preprocessing, classifier, SQuAD) builds a `tf.Module` root holding its
`tf.function`s (a `ServingModule` for models), and hands it to `write_saved_model`, which

1. picks `<base_dir>/<version>` by `io_utils.version_dir` (default: one past the highest
   numeric folder, from 1), the layout TF Serving polls;
2. saves under a hidden temporary name beside it (`io_utils.atomic_output`), which TF Serving
   ignores (it only loads numeric folder names), with TF Serving's warmup requests in
   `assets.extra/` (`serving.warmup`);
3. runs `verify(temporary_path)` there when given (e.g. a reload in a fresh process);
4. writes the folders published with it (`extras`: its TFLite files in `<base_dir>/tflite/<version>`)
   under temporary names too;
5. renames them all to their version only when all of that succeeded (`serving.publish`). A
   failed save or check leaves no version folder, so a retry takes the same version number
   again; a version another export took meanwhile moves this one to the next number; the
   temporary folder of a killed export is removed by the next export to the same base.
"""

from __future__ import annotations

import contextlib

import tensorflow as tf
# Private, but the only way to trace once: see `tracing_for_save`.
from tensorflow.python.saved_model import save_context

from albert_tf import io_utils
from albert_tf.serving.publish import ExportExistsError, Publication  # noqa: F401 - re-exported
from albert_tf.serving.warmup import sample_requests, write_warmup

# The one version-folder rule (re-exported under the name the export API has always used).
versioned_dir = io_utils.version_dir


class ServingModule(tf.Module):
    """Root object of every export: serving `tf.function`s and the resources they use.

    It holds no Keras object: the functions reach the Keras model through Python closures and
    `track_captured_variables` attaches the captured `tf.Variable`s themselves, the layout every
    loader (TF Serving's TF1-style one included) restores.
    """

    # TF-Hub's reusable-SavedModel convention stores these as attributes, while tf.Module
    # computes them as read-only properties; plain class attributes let instances set them.
    variables = ()
    trainable_variables = ()
    non_trainable_variables = ()
    regularization_losses = ()


def inference_call(model):
    """`model(features, training=False)` as one tf.function for every signature of an export to
    call: the model's graph is traced once per input shape rather than once per signature (the
    bulk of an export's time), and the runtime inlines the call, so serving runs the same ops.
    Serving code branches on Python values only, so autograph's rewrite is skipped."""
    return tf.function(lambda features: model(features, training=False), autograph=False)


def track_captured_variables(root, functions) -> None:
    """Attaches the tf.Variables the traced functions capture, as TF-Hub's reusable-SavedModel
    attributes (`variables` includes dropout RNG states).

    They must be the captured variables themselves: Keras variables are wrappers, and saving
    the wrappers gives a SavedModel whose graph the TF1-style loader of TF Serving and
    `saved_model_cli run` cannot initialise ("Could not find variable").
    """
    trainable, every = {}, {}
    for fn in functions:
        trainable.update((id(v), v) for v in fn.trainable_variables)
        every.update((id(v), v) for v in fn.variables)
    root.variables = list(every.values())
    root.trainable_variables = list(trainable.values())
    root.non_trainable_variables = [v for k, v in every.items() if k not in trainable]
    root.regularization_losses = []


# The options every export is saved with; `tracing_for_save` traces under the same ones.
SAVE_OPTIONS = tf.saved_model.SaveOptions()


@contextlib.contextmanager
def tracing_for_save():
    """Traces made inside are the ones `tf.saved_model.save` reuses. Save looks every function
    up again inside its own context, whose options are part of the trace cache's key, so a
    module traced outside it was traced twice (half of an export's time)."""
    if save_context.in_save_context():
        yield
        return
    with save_context.save_context(SAVE_OPTIONS):
        yield


def attach_signature(root, signatures: dict, name: str, fn, resources: dict, check, own_check):
    """Adds the tf.function `fn` to an export's `root` and `signatures` as `name`, with the
    tokenizer resources it captures (`<name>_<resource>`), traced for the save; returns `check`
    (the export's fresh-process comparison) with `own_check()`'s calls and outputs added."""
    setattr(root, name, fn)
    for key, resource in resources.items():
        setattr(root, f"{name}_{key}", resource)
    with tracing_for_save():
        fn.get_concrete_function()
    signatures[name] = fn

    def checked():
        calls, expected = check()
        own_calls, own_expected = own_check()
        return {**calls, **own_calls}, {**expected, **own_expected}

    return checked


def serving_root(functions: dict, resources: dict | None = None) -> ServingModule:
    """A `ServingModule` with the given tf.functions (traced with their input signatures) and
    resources (e.g. a SentencePiece tokenizer whose model handle the functions capture)."""
    root = ServingModule()
    for name, fn in functions.items():
        setattr(root, name, fn)
    for name, resource in (resources or {}).items():
        setattr(root, name, resource)
    with tracing_for_save():
        traced = [fn.get_concrete_function() for fn in functions.values()]
    track_captured_variables(root, traced)
    return root


def _save(module, path, signatures, warmup) -> None:
    """The SavedModel and its TF Serving warmup requests (`serving.warmup`)."""
    tf.saved_model.save(module, path, signatures=signatures, options=SAVE_OPTIONS)
    requests = {**sample_requests(path, signatures), **(warmup or {})}
    if requests:
        write_warmup(path, requests)


@contextlib.contextmanager
def staged_saved_model(module: tf.Module, base_dir, signatures: dict, version: int | None = None,
                       extras=(), publication: Publication | None = None, warmup=None):
    """Saves `module` under a temporary name for `<base_dir>/<version>` and yields its `Stage`
    (`stage.path`: the temporary folder; `stage.extra(name)`: a folder published as
    `<base_dir>/<name>/<version>`, for each name in `extras`). Everything is published when the
    block ends without an error — with the other stages of `publication` when one is given, at
    its end — and nothing otherwise (`serving.publish`). The SavedModel gets TF Serving's
    `assets.extra/tf_serving_warmup_requests`: one request per signature, `warmup`'s inputs
    ({signature: {input: array}}: the verification's) where it has them, else sample inputs
    (`serving.warmup.sample_requests`)."""
    if publication is not None:
        stage = publication.stage(base_dir, version, extras)
        _save(module, stage.path, signatures, warmup)
        yield stage
        return
    with Publication() as own:
        stage = own.stage(base_dir, version, extras)
        _save(module, stage.path, signatures, warmup)
        yield stage


def write_saved_model(module: tf.Module, base_dir, signatures: dict, version: int | None = None,
                      verify=None, extras: dict | None = None) -> str:
    """Writes `<base_dir>/<version>` (see the module docstring); returns its absolute path.
    `verify(temporary_path)` runs before the version is published; an error it raises leaves
    nothing behind. `extras`: {name: write(folder)} of folders published with it as
    `<base_dir>/<name>/<version>` (its TFLite files), each written into an empty folder first."""
    extras = extras or {}
    with staged_saved_model(module, base_dir, signatures, version, tuple(extras)) as stage:
        if verify is not None:
            verify(stage.path)
        for name, write in extras.items():
            write(stage.extra(name))
    return stage.target


def resolve_path(path):
    """An absolute local path (None and remote URLs such as gs:// are returned as given): the
    fresh-process check and the saved assets must not depend on the current directory."""
    return io_utils.absolute_path(path)
