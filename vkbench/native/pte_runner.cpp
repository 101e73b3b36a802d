// Execute a Many(n) .pte through the ExecuTorch C++ runtime, without Python or torch.
//
// Why: the PyPI executorch 1.5.1 pybindings cannot execute with torch 2.11
// ("tensor does not have a device"), and a machine we cannot install torch 2.13
// on (the H200 device) still has the wheel's libexecutorch.so and our Vulkan
// backend library. This links only those two and prints one JSON line:
//   {"pte": ..., "steps": n, "ok": true, "load_s": .., "execute_s": [..], "max_abs_diff": ..}
// The reference is Many(n) in float32 on the CPU (x = x*1.0001 + 0.001, n times).
//
// Build (see vkbench/runtime_native.py):
//   g++ -O2 -std=c++17 -DC10_USING_CUSTOM_GENERATED_MACROS -DET_EVENT_TRACER_ENABLED
//       -I$ET/include pte_runner.cpp -L$ET/lib -Wl,--no-as-needed -lexecutorch BACKEND.so
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

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: pte_runner PTE STEPS [REPEATS]\n");
    return 2;
  }
  const char* pte = argv[1];
  const int steps = std::atoi(argv[2]);
  const int repeats = argc > 3 ? std::atoi(argv[3]) : 5;
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
