# A shell step: the shell allow-list's commands (rules/prescan/shell/commands.toml) over a
# CSV, through pipes, lists, substitutions and redirections, as `dash` runs a session's
# shell step. It passes the shell pre-scan; it reads its JSON input and prints JSON.
cat > input.json
printf 'name,score\nb,2\na,3\nc,1\n' > data.csv
sort -t, -k2,2n data.csv | head -n 3 > top.csv
rows=$(tail -n +2 data.csv | cut -d, -f1 | tr a-z A-Z | uniq | wc -l)
hits=$(grep -c , data.csv)
mkdir -p sub/dir
cp top.csv sub/dir/copy.csv
mv sub/dir/copy.csv sub/moved.csv
touch sub/stamp
ls -la sub > listing.txt
cat listing.txt top.csv | tee both.txt > /dev/null
name=$(basename /workspace/a.csv) && dir=$(dirname sub/moved.csv)
year=$(date -u +%Y)
seq 3 | sort -r > /tmp/seq.txt
if test -s top.csv; then true; else false; fi
rm -r sub both.txt listing.txt top.csv data.csv input.json /tmp/seq.txt
echo "{\"rows\": $rows, \"hits\": $hits, \"name\": \"$name\", \"dir\": \"$dir\", \"year\": $year}"
