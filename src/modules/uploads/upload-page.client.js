// The upload page in the browser: pick or drop a file, preview it, send it with a progress bar, show the outcome.
// Progressive enhancement: without this script the form posts normally and the server answers with a page.
"use strict";
(() => {
  const form = document.getElementById("upload-form");
  if (!form) return;
  const input = document.getElementById("file");
  const drop = document.getElementById("drop");
  const empty = document.getElementById("drop-empty");
  const preview = document.getElementById("preview");
  const info = document.getElementById("file-info");
  const progress = document.getElementById("progress");
  const bar = document.getElementById("progress-bar");
  const barText = document.getElementById("progress-text");
  const message = document.getElementById("message");
  const submit = document.getElementById("submit");
  const done = document.getElementById("done");
  const doneDetail = document.getElementById("done-detail");
  const expires = document.getElementById("expires");

  const maxBytes = Number(form.dataset.maxBytes);
  // Counted from page load with the server's remaining seconds: the browser's own clock may be off.
  const expiresAt = Date.now() + Number(form.dataset.expiresIn) * 1000;
  const TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"];
  let chosen = null;
  let previewUrl = null;
  let busy = false;

  function formatBytes(n) {
    if (n >= 1048576) return `${(n / 1048576).toFixed(1).replace(/\.0$/, "")} MB`;
    if (n >= 1024) return `${Math.round(n / 1024)} KB`;
    return `${n} bytes`;
  }

  function showMessage(text, kind) {
    message.textContent = text;
    message.className = `message ${kind || "error"}`;
    message.hidden = !text;
  }

  if (expires && Number.isFinite(expiresAt)) {
    expires.textContent = `at ${new Date(expiresAt).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" })}`;
  }

  function choose(file) {
    if (!file || busy) return;
    chosen = file;
    if (previewUrl) URL.revokeObjectURL(previewUrl);
    previewUrl = null;
    info.hidden = false;
    info.textContent = `${file.name} · ${formatBytes(file.size)}`;
    progress.hidden = true;
    if (file.size > maxBytes) {
      showMessage(`That file is ${formatBytes(file.size)}; the limit is ${formatBytes(maxBytes)}. Choose a smaller image.`);
    } else if (file.type && !TYPES.includes(file.type)) {
      showMessage("That file is not a PNG, JPEG, GIF or WebP image. Choose another file.");
    } else {
      showMessage("");
    }
    if (TYPES.includes(file.type)) {
      previewUrl = URL.createObjectURL(file);
      preview.src = previewUrl;
      preview.alt = `Preview of ${file.name}`;
      preview.hidden = false;
      empty.hidden = true;
    } else {
      preview.hidden = true;
      preview.removeAttribute("src");
      empty.hidden = false;
    }
  }

  input.addEventListener("change", () => choose(input.files && input.files[0]));
  // A file that claims an image type but cannot be drawn: no broken-image icon, and say so before the upload.
  preview.addEventListener("error", () => {
    if (!preview.getAttribute("src")) return;
    preview.hidden = true;
    preview.removeAttribute("src");
    empty.hidden = false;
    showMessage("This file cannot be previewed; it may not be an image. You can still try to upload it.", "gone");
  });

  for (const name of ["dragenter", "dragover"]) {
    drop.addEventListener(name, (event) => {
      event.preventDefault();
      if (!busy) drop.classList.add("dragging");
    });
  }
  for (const name of ["dragleave", "dragend"]) drop.addEventListener(name, () => drop.classList.remove("dragging"));
  drop.addEventListener("drop", (event) => {
    event.preventDefault();
    drop.classList.remove("dragging");
    const file = event.dataTransfer && event.dataTransfer.files[0];
    if (file) choose(file);
  });

  function finishGone(text) {
    showMessage(text, "gone");
    submit.disabled = true;
    input.disabled = true;
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (busy) return;
    if (!chosen) {
      showMessage("Choose an image first.");
      return;
    }
    if (Date.now() >= expiresAt) {
      finishGone("This link has expired. Ask for a new one to add an image.");
      return;
    }
    const data = new FormData();
    data.append("file", chosen, chosen.name);
    const xhr = new XMLHttpRequest();
    xhr.open("POST", form.action);
    xhr.setRequestHeader("Accept", "application/json");
    xhr.responseType = "json";
    busy = true;
    submit.disabled = true;
    input.disabled = true;
    submit.textContent = "Uploading…";
    showMessage("");
    progress.hidden = false;
    bar.value = 0;
    barText.textContent = "0%";
    xhr.upload.addEventListener("progress", (e) => {
      if (!e.lengthComputable) return;
      const pct = Math.min(100, Math.round((e.loaded / e.total) * 100));
      bar.value = pct;
      barText.textContent = `${pct}%`;
    });
    const reset = () => {
      busy = false;
      submit.disabled = false;
      input.disabled = false;
      submit.textContent = "Upload image";
    };
    xhr.addEventListener("load", () => {
      const body = xhr.response || {};
      if (xhr.status === 201 && body.asset) {
        bar.value = 100;
        barText.textContent = "100%";
        form.hidden = true;
        document.getElementById("title").textContent = "Image added";
        document.getElementById("lead").hidden = true;
        document.title = "Image added · Seedcast";
        doneDetail.textContent = `Saved as ${body.asset.fileName} (${formatBytes(body.asset.sizeBytes)}).`;
        done.hidden = false;
        done.insertBefore(preview.cloneNode(true), done.firstChild).hidden = !previewUrl;
        return;
      }
      reset();
      progress.hidden = true;
      if (xhr.status === 410 || xhr.status === 404) {
        finishGone(body.message || "This link can no longer be used. Ask for a new one.");
      } else {
        showMessage(body.message || `The upload failed (HTTP ${xhr.status}). Try again.`);
      }
    });
    xhr.addEventListener("error", () => {
      reset();
      progress.hidden = true;
      showMessage("The upload did not reach the server. Check your connection and try again.");
    });
    xhr.send(data);
  });
})();
