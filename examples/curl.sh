#!/usr/bin/env bash
# An image with curl and jq: price it, submit it (with an idempotency key), poll its task until
# it finishes, download the result. Every value travels in GraphQL variables, built by jq.
#
#   ATELIER_API_KEY=svc_… examples/curl.sh "a lighthouse at dawn"
set -euo pipefail
url="${ATELIER_URL:-http://localhost:8080}"
: "${ATELIER_API_KEY:?Set ATELIER_API_KEY to an API key (the first start printed one).}"
prompt="${1:-a lighthouse at dawn}"

# gql QUERY VARIABLES_JSON: the response's data; its first error stops the script.
gql() {
  local response
  response=$(jq -n --arg query "$1" --argjson variables "$2" '{query: $query, variables: $variables}' |
    curl -sS "$url/graphql" -H 'content-type: application/json' \
      -H "authorization: Bearer $ATELIER_API_KEY" --data-binary @-)
  if jq -e '.errors' >/dev/null <<<"$response"; then
    jq -r '.errors[0] | "\(.extensions.code): \(.message)"' <<<"$response" >&2
    exit 1
  fi
  jq '.data' <<<"$response"
}

input=$(jq -n --arg prompt "$prompt" \
  '{modelId: "mdl_atelier-sketch", prompt: $prompt, width: 1024, height: 1024, format: "png"}')

gql 'query ($input: CostEstimateInput!) { estimateCost(input: $input) { credits affordable } }' \
  "$(jq -n --argjson input "$input" '{input: {kind: "image", input: $input}}')" |
  jq -r '"costs \(.estimateCost.credits) credits (affordable: \(.estimateCost.affordable))"'

key=$(cat /proc/sys/kernel/random/uuid 2>/dev/null || uuidgen)
submitted=$(gql 'mutation ($input: GenerateImageInput!) { generateImage(input: $input) { contentId taskId } }' \
  "$(jq -n --argjson input "$input" --arg key "$key" '{input: ($input + {idempotencyKey: $key})}')")
content=$(jq -r '.generateImage.contentId' <<<"$submitted")
task=$(jq -r '.generateImage.taskId' <<<"$submitted")
echo "submitted: content $content, task $task"

while :; do
  state=$(gql 'query ($id: ID!) { getTask(taskId: $id) { status progress finishCode finishMessage } }' \
    "$(jq -n --arg id "$task" '{id: $id}')")
  status=$(jq -r '.getTask.status' <<<"$state")
  echo "$status"
  [ "$status" = finished ] && break
  sleep 1
done
code=$(jq -r '.getTask.finishCode' <<<"$state")
if [ "$code" != 0 ]; then
  echo "finished with code $code: $(jq -r '.getTask.finishMessage' <<<"$state")" >&2
  exit 1
fi

gql 'query ($id: ID!) { getContent(contentId: $id) { media { mediaId download { url } } } }' \
  "$(jq -n --arg id "$content" '{id: $id}')" |
  jq -r '.getContent.media[] | "\(.mediaId) \(.download.url)"' |
  while read -r media link; do
    curl -sS -o "$media.png" "$link"
    echo "downloaded $media.png"
  done
