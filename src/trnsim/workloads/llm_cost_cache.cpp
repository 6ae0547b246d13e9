#include "trnsim/workloads/llm_cost_cache.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "trnsim/compiler/lower_matmul.h"
#include "trnsim/workloads/cost_plan.h"

namespace trnsim::workloads {

namespace {

// Lines are written by one write(2) each; below this size an O_APPEND write to a local file is
// never interleaved with another process's (Linux holds the inode lock for the whole write).
constexpr size_t kMaxLineBytes = 4096;

// Key locks held by this thread: a thread that holds one never waits for another (measuring a
// shape does not nest today; if it ever does, two processes cannot then wait for each other).
thread_local int t_locks_held = 0;

// The byte of the lock file that stands for a key: FNV-1a, the same in every build.
off_t lock_byte(const std::string& key) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : key) h = (h ^ c) * 1099511628211ull;
  return static_cast<off_t>(h % (1ull << 31));
}

enum class Lock { Held, Busy, None };  // None: no lock here (no lock file, no OFD locks, NFS without lockd)

#ifdef F_OFD_SETLKW
// One byte of the lock file, to lock (F_WRLCK) or unlock (F_UNLCK).
struct flock byte_range(short type, off_t byte) {
  struct flock fl{};
  fl.l_type = type;
  fl.l_whence = SEEK_SET;
  fl.l_start = byte;
  fl.l_len = 1;
  return fl;
}
#endif

// Open-file-description locks: owned by this CostCache's descriptor, not the process, so two
// caches on one file in one process (threads, tests) exclude each other as two processes do.
Lock lock_key(int fd, off_t byte, bool wait) {
#ifdef F_OFD_SETLKW
  struct flock fl = byte_range(F_WRLCK, byte);
  while (fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &fl) != 0)
    if (errno != EINTR) return !wait && (errno == EAGAIN || errno == EACCES) ? Lock::Busy : Lock::None;
  return Lock::Held;
#else
  (void)fd, (void)byte, (void)wait;
  return Lock::None;
#endif
}

void unlock_key(int fd, off_t byte) {
#ifdef F_OFD_SETLKW
  struct flock fl = byte_range(F_UNLCK, byte);
  fcntl(fd, F_OFD_SETLK, &fl);
#else
  (void)fd, (void)byte;
#endif
}

}  // namespace

std::string cost_cache_dir() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/trnsim";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/trnsim";
  return "";
}

CostCache::CostCache(const std::string& scope, bool use_disk) {
  if (!use_disk) return;
  const std::string dir = cost_cache_dir();
  if (dir.empty()) return;
  path_ = fmt::format("{}/llm-costs-v{}-lower{}-{}.txt", dir, kCostModelVersion, compiler::kLoweringVersion, scope);
  refresh();
}

CostCache::~CostCache() {
  if (lock_fd_ >= 0) close(lock_fd_);
}

void CostCache::refresh() {
  if (path_.empty()) return;
  struct stat now{};  // one syscall when nothing was appended (most misses of a lone run)
  if (stat(path_.c_str(), &now) != 0 ||
      (static_cast<uint64_t>(now.st_ino) == read_inode_ && static_cast<uint64_t>(now.st_size) == read_bytes_))
    return;
  const int fd = open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  struct stat st{};
  if (fstat(fd, &st) == 0) {
    // Another file under the name (a cleared cache) or a shorter one: read it from the start.
    if (static_cast<uint64_t>(st.st_ino) != read_inode_ || static_cast<uint64_t>(st.st_size) < read_bytes_) {
      read_inode_ = st.st_ino;
      read_bytes_ = 0;
    }
    std::string buf(static_cast<size_t>(st.st_size) - read_bytes_, '\0');
    const ssize_t n = buf.empty() ? 0 : pread(fd, buf.data(), buf.size(), static_cast<off_t>(read_bytes_));
    buf.resize(n > 0 ? static_cast<size_t>(n) : 0);
    // Complete lines only: a line being written now is read on a later miss.
    const size_t end = buf.rfind('\n');
    std::istringstream in(buf.substr(0, end == std::string::npos ? 0 : end + 1));
    read_bytes_ += end == std::string::npos ? 0 : end + 1;
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream ls(line);
      std::string key;
      std::vector<double> vs;
      double v = 0;
      if (!(ls >> key)) continue;
      while (ls >> v) vs.push_back(v);
      if (!vs.empty() && ls.eof()) values_[key] = std::move(vs);  // a torn line (a killed run) is skipped
    }
  }
  close(fd);
}

void CostCache::make_dir() {
  if (dir_made_) return;
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path_).parent_path(), ec);
  dir_made_ = true;  // a failure shows as the write's warning
}

int CostCache::lock_fd() {
  if (lock_fd_ == -2) {
    lock_fd_ = open((path_ + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock_fd_ < 0) lock_fd_ = -1;
  }
  return lock_fd_;
}

std::optional<std::vector<double>> CostCache::find(const std::string& key, size_t arity) const {
  auto it = values_.find(key);
  if (it == values_.end() || it->second.size() != arity) return std::nullopt;
  return it->second;
}

std::optional<std::vector<double>> CostCache::lookup(const std::string& key, size_t arity) {
  if (auto v = find(key, arity)) return v;
  refresh();  // another process may have measured it since this one started
  return find(key, arity);
}

std::vector<double> CostCache::get_or_measure(const std::string& key, size_t arity,
                                              const std::function<std::vector<double>()>& measure) {
  if (auto v = lookup(key, arity)) return *v;
  if (CostPlan* plan = CostPlan::recording()) {
    plan->note(*this, key, arity, measure);
    return std::vector<double>(arity, kPlaceholderCost);
  }
  return *measure_once(key, arity, measure, true);
}

bool CostCache::measure_unless_busy(const std::string& key, size_t arity,
                                    const std::function<std::vector<double>()>& measure) {
  return lookup(key, arity) || measure_once(key, arity, measure, false);
}

std::optional<std::vector<double>> CostCache::measure_once(const std::string& key, size_t arity,
                                                           const std::function<std::vector<double>()>& measure, bool wait) {
  int fd = -1;
  if (!path_.empty() && t_locks_held == 0) {
    make_dir();
    fd = lock_fd();
  }
  const off_t byte = lock_byte(key);
  Lock lock = fd >= 0 ? lock_key(fd, byte, false) : Lock::None;
  if (lock == Lock::Busy) {  // another measurer has it
    if (!wait) return std::nullopt;
    lock = lock_key(fd, byte, true);
    ++lock_waits_;
  }
  if (lock == Lock::Held) {
    if (auto v = lookup(key, arity)) {  // written by whoever held it, or between the miss and the lock
      unlock_key(fd, byte);
      return v;
    }
  }
  // Without a lock a shape may be measured twice, with the same result: locks only save time.
  const bool held = lock == Lock::Held;
  t_locks_held += held;
  std::vector<double> values;
  try {
    values = measure();
  } catch (...) {
    t_locks_held -= held;
    if (held) unlock_key(fd, byte);
    throw;
  }
  put_values(key, values);  // written before the lock is released: a waiter finds it
  t_locks_held -= held;
  if (held) unlock_key(fd, byte);
  return values;
}

std::optional<std::vector<double>> CostCache::get_values(const std::string& key) const {
  auto it = values_.find(key);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

void CostCache::put_values(const std::string& key, const std::vector<double>& values) {
  values_[key] = values;
  if (path_.empty()) return;
  std::string line = key;
  for (double v : values) line += fmt::format(" {:.17g}", v);  // round-trips: warm == cold, bit for bit
  line += "\n";
  make_dir();
  const int fd = line.size() <= kMaxLineBytes ? open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644) : -1;
  const bool ok = fd >= 0 && write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
  if (fd >= 0) close(fd);
  if (!ok && !warned_) {
    fmt::print(stderr, "trnsim: warning: cannot write the cost cache {}; costs are measured again next time\n", path_);
    warned_ = true;
  }
}

}  // namespace trnsim::workloads
