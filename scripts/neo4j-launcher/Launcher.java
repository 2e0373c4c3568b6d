import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.driver.AuthToken;
import org.neo4j.driver.AuthTokens;
import org.neo4j.driver.Driver;
import org.neo4j.driver.GraphDatabase;

/**
 * Runs an embedded Neo4j DBMS with the Bolt and HTTP (Browser) connectors, as a
 * stand-in for a Neo4j server where Docker is not available.
 *
 * <p>Usage: {@code Launcher HOME CONF READY_FILE BOLT_URI}. Connectors, memory and
 * auth come from CONF (written by scripts/neo4j-local). When the environment
 * has NEO4J_PASSWORD, the password of user neo4j is set to it (it never travels on
 * the command line, where {@code ps} would show it). Once a Bolt {@code RETURN 1}
 * through the official Java driver succeeds, READY_FILE is written; the script
 * waits for it. SIGTERM runs the shutdown hook, which stops the DBMS cleanly.
 */
public final class Launcher {
    private Launcher() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 4) {
            System.err.println("usage: Launcher HOME CONF READY_FILE BOLT_URI");
            System.exit(2);
        }
        Path home = Paths.get(args[0]);
        Path conf = Paths.get(args[1]);
        Path ready = Paths.get(args[2]);
        String boltUri = args[3];
        Files.deleteIfExists(ready);

        DatabaseManagementService dbms =
                new DatabaseManagementServiceBuilder(home).loadPropertiesFromFile(conf).build();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            log("shutting down");
            try {
                Files.deleteIfExists(ready);
            } catch (IOException ignored) {
                // the script treats a stale ready file together with a dead pid as stopped
            }
            dbms.shutdown();
            log("stopped");
        }, "neo4j-local-shutdown"));

        String password = System.getenv("NEO4J_PASSWORD");
        boolean auth = password != null && !password.isEmpty();
        if (auth) {
            setPassword(dbms, password);
        }
        selfCheck(boltUri, auth ? AuthTokens.basic("neo4j", password) : AuthTokens.none());
        Files.writeString(ready, "bolt=" + boltUri + "\npid=" + ProcessHandle.current().pid() + "\n");
        log("ready on " + boltUri);
        // The DBMS runs on its own threads; keep the JVM alive until SIGTERM.
        Thread.currentThread().join();
    }

    private static void setPassword(DatabaseManagementService dbms, String password) {
        try {
            dbms.database("system").executeTransactionally(
                    "ALTER USER neo4j SET PASSWORD $password CHANGE NOT REQUIRED",
                    Map.of("password", password));
            log("password of user neo4j set from NEO4J_PASSWORD");
        } catch (RuntimeException e) {
            // Restarting with the password already in place: Neo4j refuses to "change" it.
            if (String.valueOf(e.getMessage()).contains("cannot be the same")) {
                log("password of user neo4j already set");
            } else {
                throw e;
            }
        }
    }

    private static void selfCheck(String boltUri, AuthToken token) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        RuntimeException last = null;
        while (System.nanoTime() < deadline) {
            try (Driver driver = GraphDatabase.driver(boltUri, token)) {
                long one = driver.executableQuery("RETURN 1 AS one").execute()
                        .records().get(0).get("one").asLong();
                if (one == 1L) {
                    return;
                }
            } catch (RuntimeException e) {
                last = e;
            }
            Thread.sleep(250);
        }
        throw new IllegalStateException("Bolt self-check against " + boltUri + " failed", last);
    }

    private static void log(String message) {
        System.out.println("neo4j-local: " + message);
        System.out.flush();
    }
}
