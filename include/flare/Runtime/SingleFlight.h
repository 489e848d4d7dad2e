//===- SingleFlight.h - One run of a keyed piece of work at a time --*- C++ -*-===//
//
// The kernel cache's rule for concurrent requests, as a class of its own so that it can be tested
// without a GPU: work for one key (compiling one kernel) runs once however many threads ask for it at
// the same time, and work for different keys runs concurrently.
//
//   caller 1:  run("k", work) --- work() runs ----------------> value      (Role::Ran)
//   caller 2:      run("k", ...) -- waits ------------------------> value  (Role::Waited)
//   caller 3:                                       run("k", work) ...      (runs again: nothing kept)
//
// Only work in flight is tracked: once it ends, its entry is gone, so an error is handed to the callers
// that waited for it and never remembered (the next call runs the work again). Remembering results is
// the caller's business (the kernel cache keeps modules in its own map).
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_RUNTIME_SINGLEFLIGHT_H
#define FLARE_RUNTIME_SINGLEFLIGHT_H

#include <cstddef>
#include <exception>
#include <future>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

namespace flare::rt {

/// Work in flight, by key (the "single flight" pattern). Thread-safe.
template <class T> class SingleFlight {
public:
  /// Whether run() ran the work itself or received another caller's result.
  enum class Role { Ran, Waited };

  /// The value of `work()` for `key`. When another call for `key` is running its work, waits for it
  /// and returns its value, or rethrows the exception that its work threw. `work` must not call run()
  /// for the same key (it would wait for itself). No lock is held while `work` runs or while waiting.
  template <class Work> std::pair<T, Role> run(const std::string &key, Work &&work) {
    std::promise<T> promise;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if (auto it = flights_.find(key); it != flights_.end()) {
        std::shared_future<T> flight = it->second;
        ++waiting_;
        lock.unlock();
        struct Leave {
          SingleFlight &self;
          ~Leave() {
            std::lock_guard<std::mutex> guard(self.mutex_);
            --self.waiting_;
          }
        } leave{*this};
        return {flight.get(), Role::Waited}; // get() rethrows the running caller's exception
      }
      flights_.emplace(key, promise.get_future().share());
    }
    std::optional<T> value;
    try {
      value.emplace(work());
    } catch (...) {
      // Waiters see the error; the entry goes, so the next call runs the work again.
      promise.set_exception(std::current_exception());
      land(key);
      throw;
    }
    promise.set_value(*value);
    land(key);
    return {std::move(*value), Role::Ran};
  }

  /// Keys whose work is running now.
  size_t inFlight() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return flights_.size();
  }
  /// Callers waiting now for another caller's work.
  size_t waiting() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return waiting_;
  }

private:
  void land(const std::string &key) {
    std::lock_guard<std::mutex> lock(mutex_);
    flights_.erase(key);
  }

  mutable std::mutex mutex_;
  std::unordered_map<std::string, std::shared_future<T>> flights_;
  size_t waiting_ = 0;
};

} // namespace flare::rt

#endif // FLARE_RUNTIME_SINGLEFLIGHT_H
