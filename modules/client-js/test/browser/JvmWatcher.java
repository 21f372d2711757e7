// A JVM client for the console's browser test (console.mjs): connects with the JVM library
// (modules/client) to a workspace, subscribes to a Log and a Doc, and prints what it receives, one
// line each, so the test can see a change made in the console reach a JVM client's subscription.
// Run as a single-file program: java -cp <client jar>:<its libs> JvmWatcher.java URL TOKEN LOG DOC.
// Prints "ready" once both subscriptions are accepted; then "log <seq> <body>" and
// "doc <version> <op> <value>"; exits when its stdin closes.
import java.net.URI;
import java.time.Duration;

import io.hyphamesh.client.HyphaClient;
import io.hyphamesh.client.Subscription;

public class JvmWatcher {
    public static void main(String[] args) throws Exception {
        try (HyphaClient c = HyphaClient.connect(URI.create(args[0]), args[1])) {
            Subscription log = c.log(args[2]).subscribe(0, r -> say("log " + r.seq() + " " + r.bodyText()), Duration.ofSeconds(10));
            Subscription doc = c.doc(args[3]).subscribe(e -> say("doc " + e.version() + " " + e.op() + " " + e.value()), Duration.ofSeconds(10));
            say("ready");
            while (System.in.read() >= 0) {
                // until the test closes our stdin
            }
            log.close();
            doc.close();
        }
    }

    private static synchronized void say(String line) {
        System.out.println(line);
        System.out.flush();
    }
}
