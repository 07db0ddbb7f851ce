#include "harness/util/digest.h"

#include <openssl/evp.h>

#include <stdexcept>

namespace aoti {

std::string Sha256Hex(std::string_view bytes) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), md, &n, EVP_sha256(), nullptr) != 1 || n != 32) {
    throw std::runtime_error("SHA-256 failed in OpenSSL's libcrypto (EVP_Digest)");
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex(2 * n, '0');
  for (unsigned int i = 0; i < n; ++i) {
    hex[2 * i] = kHex[md[i] >> 4];
    hex[2 * i + 1] = kHex[md[i] & 0xf];
  }
  return hex;
}

}  // namespace aoti
