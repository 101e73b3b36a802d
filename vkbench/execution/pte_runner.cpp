// Execute a .pte through the ExecuTorch C++ runtime, without Python or torch.
//
// Why: the PyPI executorch 1.5.1 pybindings cannot execute with torch 2.11
// ("tensor does not have a device"), and a machine we cannot install torch 2.13
// on (the H200 device) still has the wheel's libexecutorch.so and our Vulkan
// backend library. This links only those (plus any other backend library) and
// prints one JSON line:
//   pte_runner PTE --io DIR [REPEATS]  reads DIR/input_<i>.bin (raw bytes, the method's planned
//       sizes and dtypes), executes REPEATS + 1 times (the first is a warm-up, not timed), writes
//       DIR/output_<i>.bin -> {"ok", "load_s", "execute_s": [..], "outputs": [{"index", "dtype", "sizes"}]}
//   or {"ok": false, "stage": "load" | "execute", "error": ...}: the stages of vkbench's ladder.
//   A "# loaded" line comes first once the method is loaded, so a crash after it reads as "execute".
// vkbench.execution.runners compares the outputs with eager PyTorch's.
//
// Build: vkbench runtime build-runner OUT LIB... [--executorch DIR]
#include <executorch/extension/data_loader/file_data_loader.h>
#include <executorch/runtime/core/hierarchical_allocator.h>
#include <executorch/runtime/core/memory_allocator.h>
#include <executorch/runtime/core/exec_aten/exec_aten.h>
#include <executorch/runtime/executor/memory_manager.h>
#include <executorch/runtime/executor/method.h>
#include <executorch/runtime/executor/program.h>
#include <executorch/runtime/platform/runtime.h>

#include <chrono>
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

static int fail(const char* pte, const char* stage, const std::string& what) {
  std::string clean;
  for (char c : what.substr(0, 300)) clean += (c == '"' || c == '\\' || c == '\n') ? ' ' : c;
  std::printf("{\"pte\": \"%s\", \"ok\": false, \"stage\": \"%s\", \"error\": \"%s\"}\n", pte, stage,
              clean.c_str());
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
    if (!info.ok()) return fail(pte, "execute", "set_input: input " + std::to_string(i) + " is not a tensor");
    std::string path = dir + "/input_" + std::to_string(i) + ".bin";
    std::ifstream file(path, std::ios::binary);
    data[i].assign(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
    if (data[i].size() != info->nbytes())
      return fail(pte, "execute", "set_input: " + path + ": " + std::to_string(data[i].size()) +
                                      " bytes, expected " + std::to_string(info->nbytes()));
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
      if (set != Error::Ok) return fail(pte, "execute", "set_input: error " + std::to_string(int(set)));
    }
    double start = now();
    Error err = method.execute();
    double elapsed = now() - start;
    if (err != Error::Ok) return fail(pte, "execute", "error " + std::to_string(int(err)));
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
  if (argc < 4 || std::string(argv[2]) != "--io") {
    std::fprintf(stderr, "usage: pte_runner PTE --io DIR [REPEATS]\n");
    return 2;
  }
  const char* pte = argv[1];
  const int repeats = argc > 4 ? std::atoi(argv[4]) : 5;
  executorch::runtime::runtime_init();
  const char* stage = "load";  // what a C++ exception interrupted (a VK_CHECK throws one)
  try {
    double t0 = now();
    auto loader = FileDataLoader::from(pte);
    if (!loader.ok()) return fail(pte, "load", "FileDataLoader failed");
    auto program = Program::load(&loader.get());
    if (!program.ok()) return fail(pte, "load", "Program::load failed");
    auto meta = program->method_meta("forward");
    if (!meta.ok()) return fail(pte, "load", "no forward");
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
    if (!method.ok()) return fail(pte, "load", "Method load failed: error " + std::to_string(int(method.error())));
    double load_s = now() - t0;
    stage = "execute";
    std::printf("# loaded\n");  // a runner that dies after this line died executing, not loading
    std::fflush(stdout);
    return run_io(*method, pte, argv[3], repeats, load_s);
  } catch (const std::exception& e) {
    return fail(pte, stage, e.what());
  }
}
