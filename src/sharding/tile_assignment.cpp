// TileAssignment: explicit and iota device arrays, their reshapes/transposes and XLA text.
#include "sharding/tile_assignment.h"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <numeric>
#include <sstream>

#include "support/diagnostic.h"

namespace gspmd {
namespace {

int64_t Product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

bool IsIdentity(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

bool IsPermutation(const std::vector<int64_t>& perm, size_t n) {
  if (perm.size() != n) return false;
  std::vector<bool> seen(n, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(n) || seen[p]) return false;
    seen[p] = true;
  }
  return true;
}

// Brings (reshape_dims, perm) to XLA's canonical iota form: size-1 dims dropped, dims that
// stay adjacent through the transpose merged, an identity transpose folded into one dim.
void CanonicalizeIota(std::vector<int64_t>& reshape_dims, std::vector<int64_t>& perm) {
  // Drop size-1 reshape dims.
  std::vector<int64_t> new_index(reshape_dims.size(), -1);
  std::vector<int64_t> kept_dims;
  for (size_t i = 0; i < reshape_dims.size(); ++i) {
    if (reshape_dims[i] == 1) continue;
    new_index[i] = static_cast<int64_t>(kept_dims.size());
    kept_dims.push_back(reshape_dims[i]);
  }
  std::vector<int64_t> kept_perm;
  for (int64_t p : perm) {
    if (new_index[p] >= 0) kept_perm.push_back(new_index[p]);
  }
  // Merge runs perm[k+1] == perm[k] + 1.
  struct Run {
    int64_t start;
    int64_t size;
  };
  std::vector<Run> runs;  // in transposed order
  for (size_t k = 0; k < kept_perm.size(); ++k) {
    const bool continues_run = k > 0 && kept_perm[k] == kept_perm[k - 1] + 1;
    if (continues_run) {
      runs.back().size *= kept_dims[kept_perm[k]];
    } else {
      runs.push_back({kept_perm[k], kept_dims[kept_perm[k]]});
    }
  }
  std::vector<int64_t> order(runs.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](int64_t a, int64_t b) { return runs[a].start < runs[b].start; });
  reshape_dims.assign(runs.size(), 1);
  std::vector<int64_t> rank_of_run(runs.size());
  for (size_t r = 0; r < order.size(); ++r) {
    reshape_dims[r] = runs[order[r]].size;
    rank_of_run[order[r]] = static_cast<int64_t>(r);
  }
  perm.assign(rank_of_run.begin(), rank_of_run.end());
  if (IsIdentity(perm)) {
    reshape_dims = {Product(reshape_dims)};
    perm = {0};
  }
}

// One piece of a common refinement of the tile dims and the transposed iota dims.
struct Atom {
  int64_t size;
  int64_t tile_dim;     // which dim of the tile array it belongs to
  int64_t reshape_dim;  // which iota reshape dim it is a part of
};

// Splits an iota's transposed dims and `dims` into common atoms (row-major order). Fails
// when a dim boundary falls inside an iota dim in a way no split can express.
bool SplitIntoAtoms(const std::vector<int64_t>& dims, const std::vector<int64_t>& reshape_dims,
                    const std::vector<int64_t>& perm, std::vector<Atom>& atoms) {
  size_t i = 0, j = 0;
  int64_t ra = 0, rb = 0;
  auto next_a = [&] {
    while (i < dims.size() && dims[i] == 1) ++i;
    ra = i < dims.size() ? dims[i] : 0;
  };
  auto next_b = [&] {
    while (j < perm.size() && reshape_dims[perm[j]] == 1) ++j;
    rb = j < perm.size() ? reshape_dims[perm[j]] : 0;
  };
  next_a();
  next_b();
  while (ra > 0 && rb > 0) {
    const int64_t step = std::min(ra, rb);
    if (ra % step != 0 || rb % step != 0) return false;
    atoms.push_back({step, static_cast<int64_t>(i), perm[j]});
    ra /= step;
    rb /= step;
    if (ra == 1) {
      ++i;
      next_a();
    }
    if (rb == 1) {
      ++j;
      next_b();
    }
  }
  return ra == 0 && rb == 0;
}

// Rebuilds an iota from atoms: `atom_order` lists atom indices in the new transposed order.
TileAssignment IotaFromAtoms(std::vector<int64_t> new_dims, const std::vector<Atom>& atoms,
                             const std::vector<int64_t>& atom_order, int64_t num_reshape_dims) {
  // New reshape dims: each old reshape dim split into its atoms (atoms of one reshape dim
  // appear major to minor in creation order).
  std::vector<int64_t> atom_reshape_index(atoms.size());
  std::vector<int64_t> new_reshape_dims;
  for (int64_t r = 0; r < num_reshape_dims; ++r) {
    for (size_t a = 0; a < atoms.size(); ++a) {
      if (atoms[a].reshape_dim != r) continue;
      atom_reshape_index[a] = static_cast<int64_t>(new_reshape_dims.size());
      new_reshape_dims.push_back(atoms[a].size);
    }
  }
  std::vector<int64_t> new_perm;
  new_perm.reserve(atom_order.size());
  for (int64_t a : atom_order) new_perm.push_back(atom_reshape_index[a]);
  if (new_reshape_dims.empty()) {
    new_reshape_dims = {1};
    new_perm = {0};
  }
  return TileAssignment::Iota(std::move(new_dims), std::move(new_reshape_dims),
                              std::move(new_perm));
}

void AppendJoined(std::ostringstream& out, const std::vector<int64_t>& v) {
  for (size_t i = 0; i < v.size(); ++i) {
    if (i > 0) out << ',';
    out << v[i];
  }
}

}  // namespace

TileAssignment::TileAssignment(std::vector<int64_t> dims, std::vector<int64_t> devices)
    : dims_(std::move(dims)) {
  GSPMD_CHECK(Product(dims_) == static_cast<int64_t>(devices.size()), "tile assignment has ",
              devices.size(), " devices for ", dims_.size(), " dims");
  storage_ = MakeStorage(std::move(devices));
}

std::shared_ptr<const TileAssignment::Storage> TileAssignment::MakeStorage(std::vector<int64_t> devices) {
  auto storage = std::make_shared<Storage>();
  storage->devices = std::move(devices);
  int64_t bound = 0;
  for (int64_t d : storage->devices) bound = std::max(bound, d + 1);
  storage->max_device_plus_one = bound;
  const int64_t count = static_cast<int64_t>(storage->devices.size());
  const bool dense_enough = bound <= 4 * count + 1024;
  if (dense_enough) {
    storage->device_positions.assign(bound, -1);
    for (int64_t n = 0; n < count; ++n) {
      const int64_t d = storage->devices[n];
      if (d >= 0 && storage->device_positions[d] < 0) storage->device_positions[d] = n;
    }
  }
  return storage;
}


TileAssignment TileAssignment::Iota(std::vector<int64_t> dims, std::vector<int64_t> reshape_dims,
                                    std::vector<int64_t> transpose_perm) {
  const int64_t count = Product(dims);
  if (reshape_dims.empty()) reshape_dims = {count};
  if (transpose_perm.empty()) {
    transpose_perm.resize(reshape_dims.size());
    std::iota(transpose_perm.begin(), transpose_perm.end(), 0);
  }
  GSPMD_CHECK(Product(reshape_dims) == count, "iota reshape dims do not match the tile dims");
  GSPMD_CHECK(IsPermutation(transpose_perm, reshape_dims.size()), "bad iota transpose");
  CanonicalizeIota(reshape_dims, transpose_perm);

  TileAssignment result;
  result.dims_ = std::move(dims);
  result.is_iota_ = true;
  result.reshape_dims_ = std::move(reshape_dims);
  result.transpose_perm_ = std::move(transpose_perm);

  result.storage_ = IotaStorage(result.reshape_dims_, result.transpose_perm_);
  return result;
}

std::shared_ptr<const TileAssignment::Storage> TileAssignment::IotaStorage(const std::vector<int64_t>& rd,
                                                                          const std::vector<int64_t>& perm) {
  // A row-major iota's devices do not depend on the tile dims it is viewed with, so the cache
  // key is the canonical (reshape_dims, perm). One cache per thread: no locking, and the
  // storage it hands out is immutable, so sharing it across threads is safe.
  thread_local std::unordered_map<std::string, std::shared_ptr<const Storage>> cache;
  thread_local std::string key;
  constexpr size_t kMaxCachedIotas = 4096;
  key.clear();
  for (int64_t d : rd) key.append(reinterpret_cast<const char*>(&d), sizeof(d));
  key.push_back('|');
  for (int64_t p : perm) key.push_back(static_cast<char>(p));
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  // Materialize: walk the transposed array row-major.
  const size_t rank = rd.size();
  const int64_t count = Product(rd);
  std::vector<int64_t> strides(rank, 1);
  for (int64_t k = static_cast<int64_t>(rank) - 2; k >= 0; --k)
    strides[k] = strides[k + 1] * rd[k + 1];
  std::vector<int64_t> tdims(rank), tstrides(rank);
  for (size_t k = 0; k < rank; ++k) {
    tdims[k] = rd[perm[k]];
    tstrides[k] = strides[perm[k]];
  }
  std::vector<int64_t> devices(count);
  std::vector<int64_t> index(rank, 0);
  int64_t value = 0;
  for (int64_t n = 0; n < count; ++n) {
    devices[n] = value;
    for (int64_t k = static_cast<int64_t>(rank) - 1; k >= 0; --k) {
      ++index[k];
      value += tstrides[k];
      if (index[k] < tdims[k]) break;
      value -= tstrides[k] * tdims[k];
      index[k] = 0;
    }
  }
  std::shared_ptr<const Storage> storage = MakeStorage(std::move(devices));
  if (cache.size() >= kMaxCachedIotas) cache.clear();
  cache.emplace(key, storage);
  return storage;
}

int64_t TileAssignment::MaxDevicePlusOne() const {
  return storage_ ? storage_->max_device_plus_one : 0;
}

int64_t TileAssignment::num_elements() const { return static_cast<int64_t>(Devices().size()); }

int64_t TileAssignment::DeviceAt(const std::vector<int64_t>& index) const {
  GSPMD_CHECK(index.size() == dims_.size(), "tile index rank ", index.size(), " vs ", dims_.size());
  int64_t linear = 0;
  for (size_t i = 0; i < dims_.size(); ++i) {
    GSPMD_CHECK(index[i] >= 0 && index[i] < dims_[i], "tile index out of range");
    linear = linear * dims_[i] + index[i];
  }
  return Devices()[linear];
}

int64_t TileAssignment::DeviceAtLinear(int64_t linear) const {
  GSPMD_CHECK(linear >= 0 && linear < num_elements(), "tile linear index out of range");
  return Devices()[linear];
}

std::optional<std::vector<int64_t>> TileAssignment::IndexOf(int64_t device) const {
  int64_t linear = -1;
  const std::vector<int64_t>& devices = Devices();
  const std::vector<int64_t>* positions = storage_ ? &storage_->device_positions : nullptr;
  if (positions == nullptr || !positions->empty() || devices.empty()) {
    if (positions != nullptr && device >= 0 && device < static_cast<int64_t>(positions->size())) {
      linear = (*positions)[device];
    }
  } else {
    auto it = std::find(devices.begin(), devices.end(), device);
    if (it != devices.end()) linear = it - devices.begin();
  }
  if (linear < 0) return std::nullopt;
  std::vector<int64_t> index(dims_.size(), 0);
  for (int64_t i = static_cast<int64_t>(dims_.size()) - 1; i >= 0; --i) {
    index[i] = linear % dims_[i];
    linear /= dims_[i];
  }
  return index;
}

const std::vector<int64_t>& TileAssignment::Devices() const {
  static const std::vector<int64_t> kNone;
  return storage_ ? storage_->devices : kNone;
}

bool TileAssignment::operator==(const TileAssignment& other) const {
  if (dims_ != other.dims_) return false;
  if (is_iota_ && other.is_iota_) {
    return reshape_dims_ == other.reshape_dims_ && transpose_perm_ == other.transpose_perm_;
  }
  return storage_ == other.storage_ || Devices() == other.Devices();
}

TileAssignment TileAssignment::Reshape(std::vector<int64_t> new_dims) const {
  GSPMD_CHECK(Product(new_dims) == num_elements(), "reshape of a tile assignment changes ",
              "its element count");
  if (is_iota_) return Iota(std::move(new_dims), reshape_dims_, transpose_perm_);
  TileAssignment result = *this;
  result.dims_ = std::move(new_dims);
  return result;
}

TileAssignment TileAssignment::Transpose(const std::vector<int64_t>& perm) const {
  GSPMD_CHECK(IsPermutation(perm, dims_.size()), "bad tile transpose permutation");
  std::vector<int64_t> new_dims(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) new_dims[i] = dims_[perm[i]];
  if (IsIdentity(perm)) return *this;
  if (is_iota_) {
    std::vector<Atom> atoms;
    if (SplitIntoAtoms(dims_, reshape_dims_, transpose_perm_, atoms)) {
      std::vector<int64_t> atom_order;
      for (int64_t d : perm) {
        for (size_t a = 0; a < atoms.size(); ++a) {
          if (atoms[a].tile_dim == d) atom_order.push_back(static_cast<int64_t>(a));
        }
      }
      return IotaFromAtoms(std::move(new_dims), atoms, atom_order,
                           static_cast<int64_t>(reshape_dims_.size()));
    }
  }
  // Explicit gather.
  const size_t rank = dims_.size();
  std::vector<int64_t> src_strides(rank, 1);
  for (int64_t k = static_cast<int64_t>(rank) - 2; k >= 0; --k) {
    src_strides[k] = src_strides[k + 1] * dims_[k + 1];
  }
  std::vector<int64_t> strides(rank);  // source stride of each result dim
  for (size_t i = 0; i < rank; ++i) strides[i] = src_strides[perm[i]];
  const int64_t count = num_elements();
  std::vector<int64_t> out(count);
  std::vector<int64_t> index(rank, 0);
  const std::vector<int64_t>& devices = Devices();
  int64_t src = 0;
  for (int64_t n = 0; n < count; ++n) {
    out[n] = devices[src];
    for (int64_t k = static_cast<int64_t>(rank) - 1; k >= 0; --k) {
      ++index[k];
      src += strides[k];
      if (index[k] < new_dims[k]) break;
      src -= strides[k] * new_dims[k];
      index[k] = 0;
    }
  }
  return TileAssignment(std::move(new_dims), std::move(out));
}

TileAssignment TileAssignment::SortedAlongLastDim() const {
  if (dims_.empty() || dims_.back() <= 1) return *this;
  if (is_iota_) {
    std::vector<Atom> atoms;
    if (SplitIntoAtoms(dims_, reshape_dims_, transpose_perm_, atoms)) {
      // Values inside a row are sorted when the row's atoms go through the reshape dims in
      // increasing order; reorder the last dim's atoms that way.
      const int64_t last = static_cast<int64_t>(dims_.size()) - 1;
      std::vector<int64_t> atom_order(atoms.size());
      std::iota(atom_order.begin(), atom_order.end(), 0);
      auto first_last = std::find_if(atom_order.begin(), atom_order.end(),
                                     [&](int64_t a) { return atoms[a].tile_dim == last; });
      std::stable_sort(first_last, atom_order.end(), [&](int64_t a, int64_t b) {
        if (atoms[a].reshape_dim != atoms[b].reshape_dim) {
          return atoms[a].reshape_dim < atoms[b].reshape_dim;
        }
        return a < b;
      });
      return IotaFromAtoms(dims_, atoms, atom_order, static_cast<int64_t>(reshape_dims_.size()));
    }
  }
  std::vector<int64_t> sorted = Devices();
  const int64_t group = dims_.back();
  for (size_t start = 0; start < sorted.size(); start += group) {
    std::sort(sorted.begin() + start, sorted.begin() + start + group);
  }
  return TileAssignment(dims_, std::move(sorted));
}

std::string TileAssignment::ToString() const {
  std::ostringstream out;
  out << '[';
  AppendJoined(out, dims_);
  out << ']';
  if (is_iota_) {
    out << "<=[";
    AppendJoined(out, reshape_dims_);
    out << ']';
    if (!IsIdentity(transpose_perm_)) {
      out << "T(";
      AppendJoined(out, transpose_perm_);
      out << ')';
    }
    return out.str();
  }
  AppendJoined(out, Devices());
  return out.str();
}

}  // namespace gspmd
