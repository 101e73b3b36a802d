// Execute a .pte through the ExecuTorch C++ runtime, without Python or torch.
//
// Why: the PyPI executorch 1.5.1 pybindings cannot execute with torch 2.11
// ("tensor does not have a device"), and a machine we cannot install torch 2.13
// on (the H200 device) still has the wheel's libexecutorch.so and our Vulkan
// backend library. This links only those (plus any other backend library) and
// prints one JSON line. Two modes:
//   pte_runner PTE STEPS [REPEATS]     Many(n): input sin(0.37 i), checked against
//       x = x*1.0001 + 0.001 (n times, float32) -> {"ok", "load_s", "execute_s": [..], "max_abs_diff"}
//   pte_runner PTE --io DIR [REPEATS]  any program with tensor inputs: reads
//       DIR/input_<i>.bin (raw bytes, the method's planned sizes and dtypes), writes
//       DIR/output_<i>.bin -> {"ok", "load_s", "execute_s": [..], "outputs": [{"dtype", "sizes"}]}
// The first execute is a warm-up and is not timed.
//
// Build: python -m vkbench.native build OUT BACKEND.so [EXECUTORCH_DIR]
#include <executorch/extension/data_loader/file_data_loader.h>
#include <executorch/runtime/core/hierarchical_allocator.h>
#include <executorch/runtime/core/memory_allocator.h>
#include <executorch/runtime/core/exec_aten/exec_aten.h>
#include <executorch/runtime/executor/memory_manager.h>
#include <executorch/runtime/executor/method.h>
#include <executorch/runtime/executor/program.h>
#include <executorch/runtime/platform/runtime.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

using executorch::aten::ScalarType;
using executorch::aten::Tensor;
using executorch::aten::TensorImpl;
using executorch::extension::FileDataLoader;
using executorch::runtime::Error;
using executorch::runtime::EValue;
using executorch::runtime::HierarchicalAllocator;
using executorch::runtime::MemoryAllocator;
using executorch::runtime::MemoryManager;
using executorch::runtime::Program;
using executorch::runtime::Span;

static double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

static int fail(const char* pte, int steps, const char* stage, const std::string& what) {
  std::string clean;
  for (char c : what.substr(0, 300)) clean += (c == '"' || c == '\\' || c == '\n') ? ' ' : c;
  std::printf("{\"pte\": \"%s\", \"steps\": %d, \"ok\": false, \"stage\": \"%s\", \"error\": \"%s\"}\n",
              pte, steps, stage, clean.c_str());
  return 1;
}

static void print_times(const std::vector<double>& times) {
  for (size_t i = 0; i < times.size(); ++i) std::printf("%s%.6f", i ? ", " : "", times[i]);
}

// Inputs from DIR/input_<i>.bin, outputs to DIR/output_<i>.bin (see the header).
static int run_io(executorch::runtime::Method& method, const char* pte, const std::string& dir,
                  int repeats, double load_s) {
  const auto& meta = method.method_meta();
  std::vector<std::vector<char>> data(meta.num_inputs());
  std::vector<std::vector<TensorImpl::SizesType>> sizes(meta.num_inputs());
  std::vector<std::vector<TensorImpl::DimOrderType>> orders(meta.num_inputs());
  std::vector<std::vector<TensorImpl::StridesType>> strides(meta.num_inputs());
  std::vector<std::unique_ptr<TensorImpl>> impls;
  for (size_t i = 0; i < meta.num_inputs(); ++i) {
    auto info = meta.input_tensor_meta(i);
    if (!info.ok()) return fail(pte, 0, "set_input", "input " + std::to_string(i) + " is not a tensor");
    std::string path = dir + "/input_" + std::to_string(i) + ".bin";
    std::ifstream file(path, std::ios::binary);
    data[i].assign(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
    if (data[i].size() != info->nbytes())
      return fail(pte, 0, "set_input", path + ": " + std::to_string(data[i].size()) + " bytes, expected " +
                                           std::to_string(info->nbytes()));
    for (auto v : info->sizes()) sizes[i].push_back(v);
    for (auto v : info->dim_order()) orders[i].push_back(v);
    strides[i].assign(sizes[i].size(), 1);
    for (int d = int(orders[i].size()) - 2; d >= 0; --d)  // strides follow the dim order
      strides[i][orders[i][d]] = strides[i][orders[i][d + 1]] * sizes[i][orders[i][d + 1]];
    impls.emplace_back(new TensorImpl(info->scalar_type(), sizes[i].size(), sizes[i].data(), data[i].data(),
                                      orders[i].data(), strides[i].data()));
  }
  std::vector<double> times;
  for (int r = 0; r < repeats + 1; ++r) {
    for (size_t i = 0; i < impls.size(); ++i) {
      Error set = method.set_input(EValue(Tensor(impls[i].get())), i);
      if (set != Error::Ok) return fail(pte, 0, "set_input", "error " + std::to_string(int(set)));
    }
    double start = now();
    Error err = method.execute();
    double elapsed = now() - start;
    if (err != Error::Ok) return fail(pte, 0, "execute", "error " + std::to_string(int(err)));
    if (r > 0) times.push_back(elapsed);
  }
  std::string outputs;
  for (size_t i = 0; i < method.outputs_size(); ++i) {
    const EValue& value = method.get_output(i);
    if (!value.isTensor()) continue;
    const Tensor& out = value.toTensor();
    std::ofstream file(dir + "/output_" + std::to_string(i) + ".bin", std::ios::binary);
    file.write(static_cast<const char*>(out.const_data_ptr()), out.nbytes());
    outputs += std::string(outputs.empty() ? "" : ", ") + "{\"index\": " + std::to_string(i) +
               ", \"dtype\": " + std::to_string(int(out.scalar_type())) + ", \"sizes\": [";
    for (ssize_t d = 0; d < out.dim(); ++d) outputs += (d ? ", " : "") + std::to_string(out.size(d));
    outputs += "]}";
  }
  std::printf("{\"pte\": \"%s\", \"ok\": true, \"load_s\": %.6f, \"outputs\": [%s], \"execute_s\": [",
              pte, load_s, outputs.c_str());
  print_times(times);
  std::printf("]}\n");
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: pte_runner PTE STEPS [REPEATS] | pte_runner PTE --io DIR [REPEATS]\n");
    return 2;
  }
  const bool io = std::string(argv[2]) == "--io";
  if (io && argc < 4) {
    std::fprintf(stderr, "usage: pte_runner PTE --io DIR [REPEATS]\n");
    return 2;
  }
  const char* pte = argv[1];
  const int steps = io ? 0 : std::atoi(argv[2]);
  const int repeats = io ? (argc > 4 ? std::atoi(argv[4]) : 5) : (argc > 3 ? std::atoi(argv[3]) : 5);
  executorch::runtime::runtime_init();
  try {
    double t0 = now();
    auto loader = FileDataLoader::from(pte);
    if (!loader.ok()) return fail(pte, steps, "load", "FileDataLoader failed");
    auto program = Program::load(&loader.get());
    if (!program.ok()) return fail(pte, steps, "load", "Program::load failed");
    auto meta = program->method_meta("forward");
    if (!meta.ok()) return fail(pte, steps, "load", "no forward");
    std::vector<std::unique_ptr<uint8_t[]>> buffers;
    std::vector<Span<uint8_t>> spans;
    for (size_t i = 0; i < meta->num_memory_planned_buffers(); ++i) {
      size_t size = meta->memory_planned_buffer_size(i).get();
      buffers.emplace_back(new uint8_t[size]);
      spans.emplace_back(buffers.back().get(), size);
    }
    HierarchicalAllocator planned({spans.data(), spans.size()});
    static std::vector<uint8_t> method_pool(64 << 20), temp_pool(16 << 20);
    MemoryAllocator method_allocator(method_pool.size(), method_pool.data());
    MemoryAllocator temp_allocator(temp_pool.size(), temp_pool.data());
    MemoryManager memory(&method_allocator, &planned, &temp_allocator);
    auto method = program->load_method("forward", &memory);
    if (!method.ok()) return fail(pte, steps, "load_method", "error " + std::to_string(int(method.error())));
    double load_s = now() - t0;
    if (io) return run_io(*method, pte, argv[3], repeats, load_s);

    std::vector<float> input(64), expected(64);
    for (int i = 0; i < 64; ++i) input[i] = expected[i] = std::sin(0.37f * i);
    for (int s = 0; s < steps; ++s)
      for (auto& v : expected) v = v * 1.0001f + 0.001f;
    TensorImpl::SizesType sizes[2] = {1, 64};
    TensorImpl::DimOrderType order[2] = {0, 1};
    TensorImpl::StridesType strides[2] = {64, 1};
    TensorImpl impl(ScalarType::Float, 2, sizes, input.data(), order, strides);
    std::vector<double> times;
    double diff = 0;
    for (int r = 0; r < repeats + 1; ++r) {  // the first run is a warm-up
      Error set = method->set_input(EValue(Tensor(&impl)), 0);
      if (set != Error::Ok) return fail(pte, steps, "set_input", "error " + std::to_string(int(set)));
      double start = now();
      Error err = method->execute();
      double elapsed = now() - start;
      if (err != Error::Ok) return fail(pte, steps, "execute", "error " + std::to_string(int(err)));
      if (r > 0) times.push_back(elapsed);
      const float* out = method->get_output(0).toTensor().const_data_ptr<float>();
      for (int i = 0; i < 64; ++i) diff = std::fmax(diff, std::fabs(out[i] - expected[i]));
    }
    std::printf("{\"pte\": \"%s\", \"steps\": %d, \"ok\": true, \"load_s\": %.6f, \"max_abs_diff\": %.3g, "
                "\"execute_s\": [", pte, steps, load_s, diff);
    for (size_t i = 0; i < times.size(); ++i) std::printf("%s%.6f", i ? ", " : "", times[i]);
    std::printf("]}\n");
  } catch (const std::exception& e) {
    return fail(pte, steps, "execute", e.what());
  }
  return 0;
}
