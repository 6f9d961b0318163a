const fs = require("fs");

const input = JSON.parse(fs.readFileSync(0, "utf8"));
const start = new Date(input.start);
const end = new Date(input.end);
const days = Math.round((end - start) / 86400000);
const due = new Date(start.getTime());
due.setUTCDate(due.getUTCDate() + input.net_days);
const weekday = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"][due.getUTCDay()];
console.log(JSON.stringify({ days, due: due.toISOString().slice(0, 10), weekday, year_end: new Date(Date.UTC(start.getUTCFullYear(), 11, 31)).toISOString() }));
