// ThreadSanitizer's view of oneTBB's scheduler, for the [tsan] test executables only (tests/CMakeLists.txt,
// cputrain_add_tsan_test). Linked into each of them; never part of the library.
//
// Why: TSan knows the happens-before edges of instrumented code and of the libc calls it intercepts. The
// distribution's libtbb.so is not instrumented, and its scheduler hands work between threads with its own atomics
// (a task spawned on one thread is stolen and run on another; the thread waiting for a parallel_for learns from a
// counter that it is done). TSan sees none of that, so every parallel_for reports its own task objects and every
// result read after the loop as data races (measured: 20 plain parallel_fors over a vector, 24 to 30 reports). A
// suppression cannot tell those from a real race: the reports name TBB's header code and our own bodies, and a
// worker thread's stack always holds libtbb.so, so "race:libtbb.so" would hide every race on a worker thread.
// oneTBB's ITT hooks, its own support for threading tools, mark its locks and queues but not the task deques.
// oneTBB's answer is to rebuild it with -fsanitize=thread; Debian ships no such build.
//
// What: this file gives TSan exactly the edges oneTBB guarantees, no more, by wrapping the library's exported entry
// points that the headers call (definitions here take precedence over libtbb.so's; dlsym(RTLD_NEXT) finds the
// real ones):
//   - spawn / enqueue: what the spawning thread did before spawning happens before the task runs. The task is
//     handed over inside a small wrapper task (a fresh allocation, so its address carries this one edge alone);
//     the wrapper acquires it on the thread that runs the task and forwards to execute() or cancel().
//   - wait / execute_and_wait: everything every task of the wait did happens before the wait returns. The tasks
//     end with wait_context::release(), an instrumented atomic decrement (header code) of the context's counter;
//     the waiter acquires that counter's address after libtbb.so's wait returns.
//   - task_arena::execute: the caller's past happens before the function runs (possibly on a worker of the arena,
//     when no slot is free) and the function happens before execute returns.
//   - task_scheduler_observer: libtbb.so calls observers under its own lock. The user's observer is registered
//     through a stand-in whose callbacks forward to it, ordered after observe(true) and before observe(false).
//   - is_observing(): TBB unregisters an arena's observers itself when it frees the arena, clearing the record of
//     the stand-in, not the user's copy, with no call the bridge could wrap. A watcher thread mirrors it (below),
//     so code that waits for is_observing() to turn false (numa_arenas' destructor) sees what it would see with
//     the real libtbb.so rather than time out.
//   - the small-object pool (TBB's task memory): a block freed on one thread and reused on another is ordered, as
//     the pool's own (invisible) synchronisation orders it.
// Sibling tasks get no edge between them, so a race between two tasks, or between a task and code the spawning
// thread runs after the spawn, is still reported (tests/sanitizers: the injected-race check in docs/sanitizers.md).
// The signatures are oneTBB 2021's (interface 12, Debian 12's libtbb12); a mismatch fails to link or aborts here.
#include <dlfcn.h>
#include <sanitizer/tsan_interface.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include <oneapi/tbb/detail/_small_object_pool.h>
#include <oneapi/tbb/detail/_task.h>
#include <oneapi/tbb/detail/_utils.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>
#include <oneapi/tbb/task_scheduler_observer.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace {

namespace d1 = tbb::detail::d1;

template <class F>
F real(const char* mangled) {
  void* f = dlsym(RTLD_NEXT, mangled);
  if (f == nullptr) {
    std::fprintf(stderr, "tsan_tbb_bridge: libtbb.so has no %s (another oneTBB interface?)\n", mangled);
    std::abort();
  }
  return reinterpret_cast<F>(f);
}

// Runs the spawned task after acquiring what the spawning thread released on this wrapper's address.
class handoff final : public d1::task {
 public:
  explicit handoff(d1::task& inner) : inner_(inner) {}
  d1::task* execute(d1::execution_data& ed) override { return run(ed, false); }
  d1::task* cancel(d1::execution_data& ed) override { return run(ed, true); }

 private:
  d1::task* run(d1::execution_data& ed, bool cancelled) {
    __tsan_acquire(this);
    d1::task& inner = inner_;
    delete this;  // TBB does not touch a task after execute() or cancel() returns: tasks free themselves
    return cancelled ? inner.cancel(ed) : inner.execute(ed);
  }
  d1::task& inner_;
};

d1::task& hand_off(d1::task& t) {
  auto* wrapper = new handoff(t);
  __tsan_release(wrapper);
  return *wrapper;
}

// wait_context is { std::uint64_t m_version_and_traits; std::atomic<std::uint64_t> m_ref_count; } in oneTBB 2021.
void* ref_count_of(d1::wait_context& w) {
  static_assert(sizeof(d1::wait_context) == 2 * sizeof(std::uint64_t), "oneTBB's wait_context changed");
  return reinterpret_cast<char*>(&w) + sizeof(std::uint64_t);
}

class delegate_bridge final : public d1::delegate_base {
 public:
  explicit delegate_bridge(d1::delegate_base& inner) : inner_(inner) {}
  bool operator()() const override {
    __tsan_acquire(const_cast<delegate_bridge*>(this));
    const bool result = inner_();
    __tsan_release(const_cast<delegate_bridge*>(this));
    return result;
  }

 private:
  d1::delegate_base& inner_;
};

// Stands in for a user's observer inside libtbb.so, which calls observers on the threads that enter an arena (under
// its own, invisible, lock). Each call acquires what observe(true) released and releases what observe(false)
// acquires, so the user's fields, written before observe(true) and destroyed after observe(false), are ordered.
class observer_stand_in final : public d1::task_scheduler_observer {
 public:
  explicit observer_stand_in(d1::task_scheduler_observer& user) : user_(user) {}
  observer_stand_in(d1::task_arena& arena, d1::task_scheduler_observer& user)
      : d1::task_scheduler_observer(arena), user_(user) {}
  void on_scheduler_entry(bool is_worker) override {
    __tsan_acquire(this);
    user_.on_scheduler_entry(is_worker);
    __tsan_release(this);
  }
  void on_scheduler_exit(bool is_worker) override {
    __tsan_acquire(this);
    user_.on_scheduler_exit(is_worker);
    __tsan_release(this);
  }

 private:
  d1::task_scheduler_observer& user_;
};

struct observer_registry {
  // Recursive: the watcher calls observe() with it held, so no user's observer can be destroyed meanwhile.
  std::recursive_mutex mutex;
  std::condition_variable_any registered;
  std::map<d1::task_scheduler_observer*, observer_stand_in*> stand_ins;  // user's observer -> its stand-in
};

// Never destroyed: the watcher thread uses it until the process ends, after static destructors ran.
observer_registry& registry() {
  static auto* const r = new observer_registry;
  return *r;
}

void start_release_watcher();

}  // namespace

namespace tbb::detail::r1 {

// A friend of task_scheduler_observer (its header says so), hence the access to its arena and proxy pointer.
void observe(d1::task_scheduler_observer& user, bool state) {
  static const auto f = real<void (*)(d1::task_scheduler_observer&, bool)>(
      "_ZN3tbb6detail2r17observeERNS0_2d123task_scheduler_observerEb");
  observer_registry& reg = registry();
  const std::lock_guard lock(reg.mutex);
  const auto found = reg.stand_ins.find(&user);
  if (state) {
    if (found != reg.stand_ins.end()) return;  // repeated calls with the same state are no-ops, as in oneTBB
    auto* proxy = user.my_task_arena != nullptr ? new observer_stand_in(*user.my_task_arena, user)
                                                : new observer_stand_in(user);
    __tsan_release(proxy);
    f(*proxy, true);
    reg.stand_ins.emplace(&user, proxy);
    start_release_watcher();
    reg.registered.notify_one();
    // The user's observer is "observing" (its destructor then calls observe(false), which removes the stand-in).
    user.my_proxy.store(proxy->my_proxy.load(std::memory_order_relaxed), std::memory_order_release);
  } else {
    if (found == reg.stand_ins.end()) return;
    observer_stand_in* proxy = found->second;
    f(*proxy, false);  // returns once no callback of the stand-in (so of the user's) is running
    __tsan_acquire(proxy);
    reg.stand_ins.erase(found);
    user.my_proxy.store(nullptr, std::memory_order_release);
    delete proxy;
  }
}

void spawn(d1::task& t, d1::task_group_context& ctx) {
  static const auto f = real<void (*)(d1::task&, d1::task_group_context&)>(
      "_ZN3tbb6detail2r15spawnERNS0_2d14taskERNS2_18task_group_contextE");
  f(hand_off(t), ctx);
}

void spawn(d1::task& t, d1::task_group_context& ctx, d1::slot_id id) {
  static const auto f = real<void (*)(d1::task&, d1::task_group_context&, d1::slot_id)>(
      "_ZN3tbb6detail2r15spawnERNS0_2d14taskERNS2_18task_group_contextEt");
  f(hand_off(t), ctx, id);
}

void enqueue(d1::task& t, d1::task_arena_base* arena) {
  static const auto f = real<void (*)(d1::task&, d1::task_arena_base*)>(
      "_ZN3tbb6detail2r17enqueueERNS0_2d14taskEPNS2_15task_arena_baseE");
  f(hand_off(t), arena);
}

void enqueue(d1::task& t, d1::task_group_context& ctx, d1::task_arena_base* arena) {
  static const auto f = real<void (*)(d1::task&, d1::task_group_context&, d1::task_arena_base*)>(
      "_ZN3tbb6detail2r17enqueueERNS0_2d14taskERNS2_18task_group_contextEPNS2_15task_arena_baseE");
  f(hand_off(t), ctx, arena);
}

void submit(d1::task& t, d1::task_group_context& ctx, arena* a, std::uintptr_t as_critical) {
  static const auto f = real<void (*)(d1::task&, d1::task_group_context&, arena*, std::uintptr_t)>(
      "_ZN3tbb6detail2r16submitERNS0_2d14taskERNS2_18task_group_contextEPNS1_5arenaEm");
  f(hand_off(t), ctx, a, as_critical);
}

void wait(d1::wait_context& w, d1::task_group_context& ctx) {
  static const auto f = real<void (*)(d1::wait_context&, d1::task_group_context&)>(
      "_ZN3tbb6detail2r14waitERNS0_2d112wait_contextERNS2_18task_group_contextE");
  f(w, ctx);
  __tsan_acquire(ref_count_of(w));
}

void execute_and_wait(d1::task& t, d1::task_group_context& t_ctx, d1::wait_context& w,
                      d1::task_group_context& w_ctx) {
  static const auto f =
      real<void (*)(d1::task&, d1::task_group_context&, d1::wait_context&, d1::task_group_context&)>(
          "_ZN3tbb6detail2r116execute_and_waitERNS0_2d14taskERNS2_18task_group_contextERNS2_12wait_contextES6_");
  f(t, t_ctx, w, w_ctx);  // t runs on this thread: no hand-off
  __tsan_acquire(ref_count_of(w));
}

void execute(d1::task_arena_base& arena, d1::delegate_base& d) {
  static const auto f = real<void (*)(d1::task_arena_base&, d1::delegate_base&)>(
      "_ZN3tbb6detail2r17executeERNS0_2d115task_arena_baseERNS2_13delegate_baseE");
  delegate_bridge bridge(d);
  __tsan_release(&bridge);
  f(arena, bridge);
  __tsan_acquire(&bridge);
}

void* allocate(d1::small_object_pool*& pool, std::size_t bytes, const d1::execution_data& ed) {
  static const auto f = real<void* (*)(d1::small_object_pool*&, std::size_t, const d1::execution_data&)>(
      "_ZN3tbb6detail2r18allocateERPNS0_2d117small_object_poolEmRKNS2_14execution_dataE");
  void* p = f(pool, bytes, ed);
  __tsan_acquire(p);
  return p;
}

void* allocate(d1::small_object_pool*& pool, std::size_t bytes) {
  static const auto f = real<void* (*)(d1::small_object_pool*&, std::size_t)>(
      "_ZN3tbb6detail2r18allocateERPNS0_2d117small_object_poolEm");
  void* p = f(pool, bytes);
  __tsan_acquire(p);
  return p;
}

void deallocate(d1::small_object_pool& pool, void* p, std::size_t bytes, const d1::execution_data& ed) {
  static const auto f = real<void (*)(d1::small_object_pool&, void*, std::size_t, const d1::execution_data&)>(
      "_ZN3tbb6detail2r110deallocateERNS0_2d117small_object_poolEPvmRKNS2_14execution_dataE");
  __tsan_release(p);
  f(pool, p, bytes, ed);
}

void deallocate(d1::small_object_pool& pool, void* p, std::size_t bytes) {
  static const auto f = real<void (*)(d1::small_object_pool&, void*, std::size_t)>(
      "_ZN3tbb6detail2r110deallocateERNS0_2d117small_object_poolEPvm");
  __tsan_release(p);
  f(pool, p, bytes);
}

}  // namespace tbb::detail::r1

namespace {

// While stand-ins are registered, looks every 200 us for those TBB has let go of (their arena freed) and removes
// them as observe(false) does, which clears the user's record too. Runs until the process ends.
void watch_releases() {
  observer_registry& reg = registry();
  std::unique_lock lock(reg.mutex);
  for (;;) {
    reg.registered.wait(lock, [&] { return !reg.stand_ins.empty(); });
    std::vector<d1::task_scheduler_observer*> released;
    for (const auto& [user, stand_in] : reg.stand_ins) {
      if (!stand_in->is_observing()) released.push_back(user);
    }
    // observe(false) acquires what the stand-in's last callback released, as when the user calls it.
    for (d1::task_scheduler_observer* user : released) tbb::detail::r1::observe(*user, false);
    lock.unlock();
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    lock.lock();
  }
}

void start_release_watcher() {
  static std::once_flag started;
  std::call_once(started, [] { std::thread(watch_releases).detach(); });
}

}  // namespace
