package io.hyphamesh.examples;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import io.hyphamesh.client.ArtifactInfo;
import io.hyphamesh.client.Artifacts;
import io.hyphamesh.client.HyphaClient;
import io.hyphamesh.client.UploadOptions;

/** docs/CLIENT.md "Artifacts". Arguments: the workspace URL and a token. */
public final class ArtifactsExample {
    private ArtifactsExample() {
    }

    /**
     * Runs the example.
     *
     * @param args the workspace URL and a token
     * @throws IOException when the temporary file cannot be written
     */
    public static void main(String[] args) throws IOException {
        Path file = Files.createTempFile("report", ".bin");
        Files.write(file, new byte[6 * 1024 * 1024]);
        try (HyphaClient c = HyphaClient.connect(URI.create(args[0]), args[1])) {
            // snippet:artifacts
            Artifacts files = c.artifacts();
            byte[] text = "hello".getBytes(StandardCharsets.UTF_8);
            files.put("notes/hello.txt", new ByteArrayInputStream(text), text.length, "text/plain");  // through the server
            try (InputStream in = files.get("notes/hello.txt")) {
                System.out.println(new String(in.readAllBytes(), StandardCharsets.UTF_8));
            }
            ArtifactInfo big = files.upload("reports/q3.bin", file,                   // parts straight to the store
                    UploadOptions.builder().partSize(5 * 1024 * 1024).build());
            System.out.println(big.path() + " " + big.size() + " bytes, etag " + big.etag().endsWith("-2"));
            System.out.println(files.list("reports/", "", 100).files().size() + " file under reports/");
            // end:artifacts
        } finally {
            Files.deleteIfExists(file);
        }
    }
}
