const crypto = require("crypto");
const fs = require("fs");

const { text, key } = JSON.parse(fs.readFileSync(0, "utf8"));
const digest = (alg) => crypto.createHash(alg).update(text, "utf8").digest("hex");
console.log(JSON.stringify({
  sha256: digest("sha256"),
  sha1: digest("sha1"),
  md5: digest("md5"),
  hmac_sha256: crypto.createHmac("sha256", key).update(text).digest("base64"),
}));
