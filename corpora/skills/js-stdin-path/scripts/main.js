const fs = require("fs");

const input = JSON.parse(fs.readFileSync("/dev/stdin", "utf8"));
const total = input.orders.reduce((sum, o) => sum + o.qty * o.price, 0);
const biggest = input.orders.reduce((a, b) => (a.qty * a.price >= b.qty * b.price ? a : b));
console.log(JSON.stringify({ orders: input.orders.length, total: Math.round(total * 100) / 100, biggest: biggest.id }));
