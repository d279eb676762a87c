// Preloaded into s3rver by with-s3rver.sh (node -r).  s3rver 3.7.1's
// filesystem store removes an object's directories once a DELETE leaves
// them empty (FilesystemStore.deleteObject).  A PUT into the same
// directory at that moment has made it (mkdirp) and then finds it gone
// when it opens the file: ENOENT, raised as an unhandled stream error that
// ends the server.  Sluice deletes a consumed bulk while the next bulks of
// the run are written beside it, so the tests hit this.  S3 itself has no
// directories: here the object's files are deleted and an empty directory
// simply stays (listings walk files only; deleting a bucket removes its
// tree).
'use strict';
const path = require('path');
const FilesystemStore = require(
    path.join(__dirname, 'node_modules/s3rver/lib/stores/filesystem.js'));

FilesystemStore.prototype.deleteObject = async function deleteObject(bucket, key) {
    await Promise.all(['object', 'object.md5', 'metadata.json'].map(
        (kind) => require('fs').promises.unlink(this.getResourcePath(bucket, key, kind))
            .catch((err) => {
                if (err.code !== 'ENOENT') {
                    throw err;
                }
            })));
};
