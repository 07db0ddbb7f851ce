#pragma once
// Digests of bytes, as lowercase hex: SHA-256 (OpenSSL's libcrypto), for keys that name what
// a cache may hand back as code (a compiled model), where a collision must not be craftable.

#include <string>
#include <string_view>

namespace aoti {

// The SHA-256 of `bytes`, 64 lowercase hex digits.
std::string Sha256Hex(std::string_view bytes);

}  // namespace aoti
