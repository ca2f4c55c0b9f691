"""export_saved_model.py's closing gist counts the files each runtime folder holds."""

from albert_tf.entry_points import export_gist


def test_runtime_folders_count_the_files_they_hold(tmp_path):
    onnx = tmp_path / "classifier" / "onnx" / "1"
    openvino = tmp_path / "classifier" / "openvino" / "1"
    for folder, names in ((onnx, ("c.float32.onnx", "c.dynamic_int8.onnx", "c.json", "spm.model")),
                          (openvino, ("c.float32.xml", "c.float32.bin", "c.dynamic_int8.xml",
                                      "c.dynamic_int8.bin", "c.json", "spm.model"))):
        folder.mkdir(parents=True)
        for name in names:
            (folder / name).write_text("")
    result = {"source": "weights", "classifier": str(tmp_path / "classifier" / "1"),
              "onnx": {"classifier": {"float32": str(onnx / "c.float32.onnx"),
                                      "dynamic_int8": str(onnx / "c.dynamic_int8.onnx"),
                                      "metadata": str(onnx / "c.json")}},
              "openvino": {"classifier": {"float32": str(openvino / "c.float32.xml"),
                                          "dynamic_int8": str(openvino / "c.dynamic_int8.xml"),
                                          "metadata": str(openvino / "c.json")}}}
    lines = export_gist(result, "exports")
    assert any(line.endswith(f"{onnx} (4 files)") for line in lines), lines
    assert any(line.endswith(f"{openvino} (6 files)") for line in lines), lines
